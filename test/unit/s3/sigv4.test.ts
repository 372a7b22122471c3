import assert from "node:assert/strict";
import { signHeaders, type SigningCredentials } from "../../../src/s3/sigv4.js";

/**
 * s3/sigv4's wrapper around @smithy/signature-v4 (correctness against AWS's
 * published vectors: sigv4-vectors.test.ts): what it adds to the headers,
 * what it leaves alone, and what S3 requires of the caller.
 */
const KEYS: SigningCredentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const AT = Date.parse("2026-11-25T12:00:09Z");
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const baseHeaders = (): Record<string, string> => ({ host: "127.0.0.1:7480", "x-amz-content-sha256": EMPTY_SHA256, range: "bytes=0-1023" });

describe("s3/sigv4: signing s3x's own requests", () => {
  it("adds x-amz-date and Authorization and leaves the other headers as they were", async () => {
    const headers = baseHeaders();
    await signHeaders("GET", "/bucket/a%20key", headers, KEYS, "us-east-1", "s3", AT, { partNumber: "2", uploadId: "abc" });
    assert.equal(headers["x-amz-date"], "20261125T120009Z");
    assert.match(headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261125\/us-east-1\/s3\/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
    assert.deepEqual({ ...headers, authorization: undefined, "x-amz-date": undefined }, { ...baseHeaders(), authorization: undefined, "x-amz-date": undefined });
  });

  it("signs the session token of temporary credentials", async () => {
    const headers = baseHeaders();
    await signHeaders("GET", "/bucket/k", headers, { ...KEYS, sessionToken: "token/with+chars=" }, "us-east-1", "s3", AT);
    assert.equal(headers["x-amz-security-token"], "token/with+chars=");
    assert.match(headers.authorization, /SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token,/);
  });

  it("gives a different signature for another path, query, region, day or secret", async () => {
    const sign = async (path: string, query: Record<string, string>, region: string, at: number, keys: SigningCredentials): Promise<string> => {
      const headers = baseHeaders();
      await signHeaders("GET", path, headers, keys, region, "s3", at, query);
      return /Signature=([0-9a-f]{64})$/.exec(headers.authorization)?.[1] ?? "";
    };
    const reference = await sign("/b/k", {}, "us-east-1", AT, KEYS);
    assert.equal(await sign("/b/k", {}, "us-east-1", AT, KEYS), reference, "the same request signs the same");
    const others = [
      await sign("/b/k2", {}, "us-east-1", AT, KEYS),
      await sign("/b/k", { partNumber: "1" }, "us-east-1", AT, KEYS),
      await sign("/b/k", {}, "eu-west-3", AT, KEYS),
      await sign("/b/k", {}, "us-east-1", AT + 86_400_000, KEYS),
      await sign("/b/k", {}, "us-east-1", AT, { ...KEYS, secretAccessKey: `${KEYS.secretAccessKey}x` }),
    ];
    for (const other of others) assert.notEqual(other, reference);
  });

  it("refuses to sign without a payload hash, which S3 requires", async () => {
    await assert.rejects(signHeaders("GET", "/b/k", { host: "h" }, KEYS, "us-east-1", "s3", AT), /x-amz-content-sha256 must be set/);
  });
});
