import assert from "node:assert/strict";
import { isUsualRequest, signHeaders, signHeadersSafely, signWithLibrary, type QueryParameters, type SigningCredentials } from "../../../src/s3/sigv4.js";

/**
 * s3x's hand-written SigV4 signs only input like what it has been checked on
 * (AWS's vectors, random requests against the SDK's signer); anything else
 * goes to @smithy/signature-v4. Both give the same signature where both apply.
 */
const KEYS: SigningCredentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const AT = Date.parse("2026-11-25T12:00:00Z");
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

interface Request {
  path: string;
  headers: Record<string, string>;
  query: QueryParameters;
}

function request(overrides: Partial<Request> = {}): Request {
  return {
    path: overrides.path ?? "/bucket/data/part%20one.bin",
    headers: { host: "127.0.0.1:7480", "x-amz-content-sha256": EMPTY_SHA256, range: "bytes=0-8388607", "if-match": '"0123abcd"', ...overrides.headers },
    query: overrides.query ?? {},
  };
}

async function signedBoth(r: Request): Promise<{ signer: string; authorization: string; library: string }> {
  const headers: Record<string, string> = { ...r.headers };
  const signer = await signHeadersSafely("GET", r.path, headers, KEYS, "us-east-1", "s3", AT, r.query);
  const reference: Record<string, string> = { ...r.headers };
  await signWithLibrary("GET", r.path, reference, KEYS, "us-east-1", "s3", AT, r.query);
  return { signer, authorization: headers.authorization, library: reference.authorization };
}

describe("s3/sigv4: the library fallback for unusual input", () => {
  it("signs a usual S3 request itself, as the library would", async () => {
    const r = request({ query: { partNumber: "3", uploadId: "2~abc.def_GHI-jkl" } });
    assert.equal(isUsualRequest(r.path, r.headers, r.query), true);
    const { signer, authorization, library } = await signedBoth(r);
    assert.equal(signer, "s3x");
    assert.equal(authorization, library);
  });

  const unusual: [string, Request][] = [
    ["a non-ASCII metadata value", request({ headers: { "x-amz-meta-title": "café crème" } })],
    ["a header value with a tab", request({ headers: { "x-amz-meta-note": "a\tb" } })],
    ["a header value with a run of spaces", request({ headers: { "x-amz-meta-note": "a  b" } })],
    ["a header value with spaces around it", request({ headers: { "x-amz-meta-note": " a " } })],
    ["a header name outside [A-Za-z0-9-]", request({ headers: { "x-amz-meta-my_note": "a" } })],
    ["an unencoded non-ASCII path", request({ path: "/bucket/ሴ" })],
    ["an unencoded space in the path", request({ path: "/bucket/a b" })],
    ["a lowercase %-escape in the path", request({ path: "/bucket/a%2fb" })],
    ["a non-ASCII query value", request({ query: { prefix: "données/" } })],
    ["a non-ASCII query name", request({ query: { "ሴ": "bar" } })],
  ];
  for (const [what, r] of unusual) {
    it(`hands ${what} to the library`, async () => {
      assert.equal(isUsualRequest(r.path, r.headers, r.query), false);
      const { signer, authorization, library } = await signedBoth(r);
      assert.equal(signer, "library");
      assert.equal(authorization, library);
      assert.match(authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261125\/us-east-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;_-]+, Signature=[0-9a-f]{64}$/);
    });
  }

  it("passes temporary credentials' session token on either path", async () => {
    const temporary: SigningCredentials = { ...KEYS, sessionToken: "token/with+chars=" };
    for (const path of ["/bucket/key", "/bucket/ሴ"]) {
      const headers: Record<string, string> = { ...request().headers };
      await signHeadersSafely("GET", path, headers, temporary, "us-east-1", "s3", AT);
      assert.equal(headers["x-amz-security-token"], "token/with+chars=", path);
      assert.match(headers.authorization, /SignedHeaders=[^,]*x-amz-security-token/, path);
    }
  });

  it("agrees with the hand-written signer on input both accept", async () => {
    const r = request({ headers: { "x-amz-meta-a": "1", "content-type": "application/octet-stream" } });
    const own: Record<string, string> = { ...r.headers };
    signHeaders("PUT", r.path, own, KEYS, "eu-west-3", "s3", AT);
    const library: Record<string, string> = { ...r.headers };
    await signWithLibrary("PUT", r.path, library, KEYS, "eu-west-3", "s3", AT);
    assert.equal(own.authorization, library.authorization);
  });
});
