import assert from "node:assert/strict";
import { createHash, createHmac, randomBytes, type Hash, type Hmac } from "node:crypto";
import { HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import type { SourceData } from "@smithy/types";
import { amzDate, RequestHmac, signHeaders, type SigningCredentials } from "../../../src/s3/sigv4.js";

/** SHA-256 for the SDK's signer, from Node's crypto (what the SDK itself uses on Node). */
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

/** The Authorization and x-amz-date the SDK's SigV4 signer gives the same request (S3: no double encoding). */
async function sdkSignature(method: string, path: string, headers: Record<string, string>, credentials: SigningCredentials, region: string, at: Date, query: Record<string, string | string[]> = {}): Promise<Record<string, string>> {
  const signer = new SignatureV4({ credentials, region, service: "s3", sha256: Sha256, uriEscapePath: false });
  const request = new HttpRequest({ method, protocol: "https:", hostname: headers.host, path, query: { ...query }, headers: { ...headers } });
  const signed = await signer.sign(request, { signingDate: at });
  return signed.headers;
}

const KEYS: SigningCredentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const TEMPORARY: SigningCredentials = { ...KEYS, sessionToken: "FQoGZXIvYXdzEJr//////////session+token==" };

describe("s3/sigv4: s3x's own signatures for direct requests", () => {
  it("signs GETs and PUTs exactly as the SDK's signer does", async () => {
    const at = new Date("2026-11-23T22:15:07.345Z");
    const cases: { method: string; path: string; headers: Record<string, string>; credentials: SigningCredentials; region: string }[] = [
      { method: "GET", path: "/bucket/dir/a%20b%2Bc.bin", headers: { host: "127.0.0.1:7480", "x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", range: "bytes=0-8388607", "if-match": '"0123abc-16"' }, credentials: KEYS, region: "us-east-1" },
      { method: "GET", path: "/%C3%BCn%C3%AFc%C3%B8d%C3%A9/%E6%97%A5%E6%9C%AC.bin", headers: { host: "bucket.s3.eu-west-3.amazonaws.com", "x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" }, credentials: TEMPORARY, region: "eu-west-3" },
      {
        method: "PUT",
        path: "/bucket/k%20e%20y",
        headers: {
          host: "s3.example.com",
          "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
          "content-length": "5",
          "content-type": "text/plain",
          "x-amz-meta-mtime": "1700000000.000",
          "x-amz-meta-note": "  spaced   out  value ",
          "x-amz-storage-class": "STANDARD_IA",
          "x-amz-checksum-crc32c": "mnG7TA==",
          "user-agent": "s3x test",
        },
        credentials: TEMPORARY,
        region: "ap-southeast-2",
      },
    ];
    for (const c of cases) {
      const ours = { ...c.headers };
      signHeaders(c.method, c.path, ours, c.credentials, c.region, "s3", at.getTime());
      const sdk = await sdkSignature(c.method, c.path, c.headers, c.credentials, c.region, at);
      assert.equal(ours.authorization, sdk.authorization, `${c.method} ${c.path}`);
      assert.equal(ours["x-amz-date"], sdk["x-amz-date"]);
      assert.equal(ours["x-amz-security-token"], sdk["x-amz-security-token"]);
      assert.doesNotMatch(ours.authorization, /user-agent/, "user-agent is never signed");
    }
  });

  it("signs query parameters (UploadPart's partNumber and uploadId) as the SDK does", async () => {
    const at = new Date("2026-11-23T22:15:07.345Z");
    const queries: Record<string, string>[] = [
      { partNumber: "7", uploadId: "2~lzc6aTQQkPf3YbLnkbbSQZ0dBuyJPpP" },
      { uploadId: "a b+c/d=e&f*g'h(i)j!k~l", partNumber: "10000" },
      { "x-id": "PutObject", partNumber: "1", uploadId: "ünï" },
    ];
    for (const query of queries) {
      const headers = { host: "127.0.0.1:7480", "x-amz-content-sha256": "UNSIGNED-PAYLOAD", "content-length": "8388608" };
      const ours: Record<string, string> = { ...headers };
      signHeaders("PUT", "/bucket/dir/part%20key", ours, TEMPORARY, "us-east-1", "s3", at.getTime(), query);
      const sdk = await sdkSignature("PUT", "/bucket/dir/part%20key", headers, TEMPORARY, "us-east-1", at, query);
      assert.equal(ours.authorization, sdk.authorization, JSON.stringify(query));
    }
  });

  it("signs query names that are prefixes of others as the SDK does (sorted by name, then value)", async () => {
    const at = new Date("2026-11-23T22:15:07.345Z");
    const queries: Record<string, string>[] = [
      { a: "1", "a-b": "2" },
      { "list-type": "2", prefix: "data/", "prefix-2": "x", "continuation-token": "1ueGcx/Rx1T+r==" },
      { part: "1", part1: "2", "part.x": "3", "part~": "4", "part_": "5", "part ü": "6" },
    ];
    for (const query of queries) {
      const headers = { host: "127.0.0.1:7480", "x-amz-content-sha256": "UNSIGNED-PAYLOAD" };
      const ours: Record<string, string> = { ...headers };
      signHeaders("GET", "/bucket", ours, KEYS, "us-east-1", "s3", at.getTime(), query);
      const sdk = await sdkSignature("GET", "/bucket", headers, KEYS, "us-east-1", at, query);
      assert.equal(ours.authorization, sdk.authorization, JSON.stringify(query));
    }
  });

  it("signs random requests exactly as the SDK's signer does", async () => {
    // Names and values from characters around the ones that order differently
    // as "name=value" text ('-', '.', digits, '%'-encoded) and the unreserved ones.
    const alphabet = ["a", "b", "A", "-", ".", "_", "~", "0", "9", " ", "/", "=", "&", "+", "%", "ü", "日", "*", "'"];
    let seed = 20261125;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const word = (min: number): string => Array.from({ length: min + random(4) }, () => alphabet[random(alphabet.length)]).join("");
    for (let i = 0; i < 300; i++) {
      const at = new Date(Date.UTC(2026, random(12), 1 + random(28), random(24), random(60), random(60)));
      const query: Record<string, string | string[]> = {};
      const base = word(1);
      for (let n = random(5); n > 0; n--) query[random(2) === 0 ? base + word(0) : word(1)] = random(4) === 0 ? [word(0), word(0)] : word(0);
      const headers: Record<string, string> = { host: `h${random(100)}.example.com:${1000 + random(9000)}`, "x-amz-content-sha256": random(2) ? "UNSIGNED-PAYLOAD" : randomBytes(32).toString("hex") };
      for (let n = random(4); n > 0; n--) headers[`x-amz-meta-${"abc-"[random(4)]}${random(50)}`] = `${random(2) ? "  " : ""}v ${random(1000)}${random(2) ? "   x " : ""}`;
      if (random(2)) headers.range = `bytes=${random(1000)}-${1000 + random(1000)}`;
      const credentials = random(2) ? KEYS : TEMPORARY;
      const region = ["us-east-1", "eu-west-3", "ap-southeast-2"][random(3)]!;
      const path = `/bucket/${encodeURIComponent(word(1))}`;
      const method = random(2) ? "GET" : "PUT";
      const ours = { ...headers };
      signHeaders(method, path, ours, credentials, region, "s3", at.getTime(), query);
      const sdk = await sdkSignature(method, path, headers, credentials, region, at, query);
      assert.equal(ours.authorization, sdk.authorization, `${method} ${path} ${JSON.stringify(query)} ${JSON.stringify(headers)}`);
    }
  });

  it("keeps one signing key per credentials, day and region, and a new day or new credentials sign anew", async () => {
    const headers = () => ({ host: "h", "x-amz-content-sha256": "UNSIGNED-PAYLOAD" });
    const times = ["2026-11-23T23:59:59.999Z", "2026-11-24T00:00:00.000Z", "2026-11-24T00:00:00.500Z"].map((t) => new Date(t));
    for (const at of times) {
      for (const [credentials, region] of [[KEYS, "us-east-1"], [TEMPORARY, "eu-west-1"], [KEYS, "eu-west-1"], [{ ...KEYS, secretAccessKey: "rotated" }, "us-east-1"]] as const) {
        const ours = headers() as Record<string, string>;
        signHeaders("PUT", "/b/k", ours, credentials, region, "s3", at.getTime());
        const sdk = await sdkSignature("PUT", "/b/k", headers(), credentials, region, at);
        assert.equal(ours.authorization, sdk.authorization, `${at.toISOString()} ${region}`);
      }
    }
  });

  it("formats the timestamp as SigV4 wants it, recomputed when the second changes", () => {
    assert.equal(amzDate(Date.parse("2026-11-23T22:15:07.345Z")), "20261123T221507Z");
    assert.equal(amzDate(Date.parse("2026-11-23T22:15:07.999Z")), "20261123T221507Z");
    assert.equal(amzDate(Date.parse("2026-11-23T22:15:08.000Z")), "20261123T221508Z");
    assert.equal(amzDate(Date.parse("2027-01-01T00:00:00.000Z")), "20270101T000000Z");
  });

  it("refuses to sign without a payload hash, which S3 requires", () => {
    assert.throws(() => signHeaders("GET", "/b/k", { host: "h" }, KEYS, "us-east-1", "s3", Date.now()), /x-amz-content-sha256/);
  });

  it("computes HMAC-SHA256 by one-shot hashes exactly as createHmac does, for any key and message length", () => {
    for (const keyLength of [0, 1, 32, 63, 64, 65, 200]) {
      const key = randomBytes(keyLength);
      const hmac = new RequestHmac(key);
      for (const message of ["", "a", "x".repeat(255), "y".repeat(256), "z".repeat(5000), "ünïcödé ✓ key/é", "short again"]) {
        assert.equal(hmac.hex(message), createHmac("sha256", key).update(message, "utf8").digest("hex"), `key ${keyLength} bytes, message ${message.length} chars`);
      }
    }
  });
});

