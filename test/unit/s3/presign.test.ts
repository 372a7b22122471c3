import assert from "node:assert/strict";
import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import { HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import type { SourceData } from "@smithy/types";
import { presignedQuery, type SigningCredentials } from "../../../src/s3/sigv4.js";

/** SHA-256 for the SDK's signer, from Node's crypto. */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

function bytes(data: SourceData): string | Buffer {
  if (typeof data === "string") return data;
  return ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);
}

const KEYS: SigningCredentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const TEMPORARY: SigningCredentials = { ...KEYS, sessionToken: "FQoGZXIvYXdzEJr//////////session+token==" };

describe("s3/sigv4 presignedQuery: presigned GET URLs", () => {
  it("gives the query the SDK's signer presigns (UNSIGNED-PAYLOAD, host only)", async () => {
    const at = new Date("2026-11-25T17:00:09.000Z");
    for (const { host, path, credentials, region, expiresIn } of [
      { host: "127.0.0.1:7480", path: "/bucket/dir/a%20key%2B%C3%BC%20%281%29.bin", credentials: KEYS, region: "us-east-1", expiresIn: 3600 },
      { host: "bucket.s3.eu-west-3.amazonaws.com", path: "/k", credentials: TEMPORARY, region: "eu-west-3", expiresIn: 604800 },
    ]) {
      const signer = new SignatureV4({ credentials, region, service: "s3", sha256: Sha256, uriEscapePath: false, applyChecksum: false });
      const request = new HttpRequest({ method: "GET", protocol: "https:", hostname: host, path, query: {}, headers: { host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" } });
      // As the S3 presigner: the payload is UNSIGNED-PAYLOAD, and only Host is signed.
      const sdk = await signer.presign(request, { signingDate: at, expiresIn, unhoistableHeaders: new Set(["x-amz-content-sha256"]), unsignableHeaders: new Set(["x-amz-content-sha256"]) });
      const ours = await presignedQuery("GET", host, path, credentials, region, "s3", at.getTime(), expiresIn);
      assert.deepEqual(ours, sdk.query);
    }
  });
});
