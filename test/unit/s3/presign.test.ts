import assert from "node:assert/strict";
import { HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import { NodeSha256, presignedQuery, type SigningCredentials } from "../../../src/s3/sigv4.js";

const KEYS: SigningCredentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const TEMPORARY: SigningCredentials = { ...KEYS, sessionToken: "FQoGZXIvYXdzEJr//////////session+token==" };

describe("s3/sigv4 presignedQuery: presigned GET URLs", () => {
  it("gives the query the SDK's signer presigns (UNSIGNED-PAYLOAD, host only)", async () => {
    const at = new Date("2026-11-25T17:00:09.000Z");
    for (const { host, path, credentials, region, expiresIn } of [
      { host: "127.0.0.1:7480", path: "/bucket/dir/a%20key%2B%C3%BC%20%281%29.bin", credentials: KEYS, region: "us-east-1", expiresIn: 3600 },
      { host: "bucket.s3.eu-west-3.amazonaws.com", path: "/k", credentials: TEMPORARY, region: "eu-west-3", expiresIn: 604800 },
    ]) {
      const signer = new SignatureV4({ credentials, region, service: "s3", sha256: NodeSha256, uriEscapePath: false, applyChecksum: false });
      const request = new HttpRequest({ method: "GET", protocol: "https:", hostname: host, path, query: {}, headers: { host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" } });
      // As the S3 presigner: the payload is UNSIGNED-PAYLOAD, and only Host is signed.
      const sdk = await signer.presign(request, { signingDate: at, expiresIn, unhoistableHeaders: new Set(["x-amz-content-sha256"]), unsignableHeaders: new Set(["x-amz-content-sha256"]) });
      const ours = await presignedQuery("GET", host, path, credentials, region, "s3", at.getTime(), expiresIn);
      assert.deepEqual(ours, sdk.query);
    }
  });
});
