import { createHash, createHmac, hash, type Hash, type Hmac } from "node:crypto";
import { HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import type { SourceData } from "@smithy/types";

/**
 * AWS Signature Version 4 in the Authorization header, for the requests s3x
 * builds itself (s3/direct.ts): object GETs and PUTs, and UploadPart's
 * partNumber/uploadId query.
 *
 * Why not only the SDK's signer: per request it formats the date, clones
 * the request, HMACs the credentials to look up its signing-key cache and
 * goes through several promises. Here the signing key is derived once per
 * credentials, day and region, and the timestamp string once per second; a
 * request costs one SHA-256 of its canonical form and one HMAC, both by
 * one-shot hashes (RequestHmac). Same run, 7 interleaved pairs of 2,000 ×
 * 64 KiB downloads (bench/ab.ts, load average ~20): client CPU-s median
 * 5.30 (3.18-5.75) here against 5.56 (4.47-6.87) through @smithy/signature-v4
 * with its key cached; per pair the library cost +1.00 CPU-s more (median;
 * -0.19 to +1.98, more in 6 pairs of 7), wall +4.8 s.
 *
 * The hand-written signer only takes what it has been checked on (AWS's
 * vectors in sigv4-vectors.test.ts, random requests against the SDK's
 * signer in sigv4.test.ts): an encoded ASCII path, plain header names,
 * printable ASCII header values and query parameters. Anything else (a
 * non-ASCII metadata value, a header with tabs or runs of spaces, an
 * unencoded path) is signed by @smithy/signature-v4 (signHeadersSafely).
 */

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Headers a proxy may change on the way, which SigV4 never signs (the SDK's list; proxy-* and sec-* too). */
const UNSIGNED_HEADERS = new Set([
  "authorization",
  "cache-control",
  "connection",
  "expect",
  "from",
  "keep-alive",
  "max-forwards",
  "pragma",
  "referer",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "x-amzn-trace-id",
]);

/** Derived signing keys, by credentials object, then "day/region/service". */
const signingKeys = new WeakMap<SigningCredentials, Map<string, RequestHmac>>();
let stampSecond = -1;
let stamp = "";

/** "20261123T221500Z" for a time in milliseconds; recomputed once per second. */
export function amzDate(nowMs: number): string {
  const second = Math.floor(nowMs / 1000);
  if (second !== stampSecond) {
    const iso = new Date(second * 1000).toISOString(); // 2026-11-23T22:15:00.000Z
    stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
    stampSecond = second;
  }
  return stamp;
}

function signingKey(credentials: SigningCredentials, day: string, region: string, service: string): RequestHmac {
  let keys = signingKeys.get(credentials);
  if (!keys) signingKeys.set(credentials, (keys = new Map()));
  const scope = `${day}/${region}/${service}`;
  let key = keys.get(scope);
  if (!key) {
    const dateKey = hmac(`AWS4${credentials.secretAccessKey}`, day);
    key = new RequestHmac(hmac(hmac(hmac(dateKey, region), service), "aws4_request"));
    // A run needs one key per region and day: older days are dropped as they pass.
    if (keys.size >= 8) keys.clear();
    keys.set(scope, key);
  }
  return key;
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}

const HMAC_BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) with one key for many messages, computed as two
 * one-shot hashes over the key's precomputed pads. Node 20 has no one-shot
 * HMAC, and createHmac builds a key object and a hash context per call:
 * ~9 µs per request against ~2 µs here (2,000 signatures, cold code).
 */
export class RequestHmac {
  /** The key XOR ipad, then room for the message. */
  private inner = Buffer.alloc(HMAC_BLOCK + 256);
  /** The key XOR opad, then the inner digest. */
  private readonly outer = Buffer.alloc(HMAC_BLOCK + 32);

  constructor(key: Buffer) {
    const block = key.length > HMAC_BLOCK ? hash("sha256", key, "buffer") : key;
    for (let i = 0; i < HMAC_BLOCK; i++) {
      const byte = i < block.length ? block[i] : 0;
      this.inner[i] = byte ^ 0x36;
      this.outer[i] = byte ^ 0x5c;
    }
  }

  hex(message: string): string {
    const length = Buffer.byteLength(message, "utf8");
    if (HMAC_BLOCK + length > this.inner.length) {
      const grown = Buffer.alloc(HMAC_BLOCK + length);
      this.inner.copy(grown, 0, 0, HMAC_BLOCK);
      this.inner = grown;
    }
    this.inner.write(message, HMAC_BLOCK, "utf8");
    hash("sha256", this.inner.subarray(0, HMAC_BLOCK + length), "buffer").copy(this.outer, HMAC_BLOCK);
    return hash("sha256", this.outer, "hex");
  }
}

/** Query parameters, unencoded; a name given several times has a list of values. */
export type QueryParameters = Record<string, string | string[]>;

/** What SigV4 signs of a request, and the signature's parts (for tests against AWS's published vectors). */
export interface SignedParts {
  canonicalRequest: string;
  stringToSign: string;
  authorization: string;
}

/**
 * Adds x-amz-date, x-amz-security-token (temporary credentials) and
 * Authorization to `headers`, which must already hold host and
 * x-amz-content-sha256. `path` is the URI path exactly as sent (S3 signs it
 * as is, without normalising or encoding it again); `query` the request's
 * query parameters, unencoded. Returns what was signed.
 */
export function signHeaders(
  method: string,
  path: string,
  headers: Record<string, string>,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  query: QueryParameters = {},
): SignedParts {
  const payloadHash = Object.entries(headers).find(([name]) => name.toLowerCase() === "x-amz-content-sha256")?.[1];
  if (payloadHash === undefined) throw new Error("signHeaders: x-amz-content-sha256 must be set");
  return signRequest(method, path, headers, payloadHash, credentials, region, service, nowMs, query);
}

/**
 * signHeaders for a payload whose hash is not sent as a header (SigV4's
 * generic form, as in AWS's test suite): signs `headers` as they are, plus
 * x-amz-date (and x-amz-security-token), and returns what was signed.
 */
export function signRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  payloadHash: string,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  query: QueryParameters = {},
): SignedParts {
  const date = amzDate(nowMs);
  const day = date.slice(0, 8);
  headers["x-amz-date"] = date;
  if (credentials.sessionToken) headers["x-amz-security-token"] = credentials.sessionToken;
  const values = new Map<string, string>();
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (UNSIGNED_HEADERS.has(lower) || lower.startsWith("proxy-") || lower.startsWith("sec-")) continue;
    values.set(lower, headers[name].trim().replace(/\s+/g, " "));
  }
  const names = [...values.keys()].sort();
  let canonicalHeaders = "";
  for (const name of names) canonicalHeaders += `${name}:${values.get(name)}\n`;
  const signedHeaders = names.join(";");
  const canonicalRequest = `${method}\n${path}\n${canonicalQuery(query)}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${date}\n${scope}\n${hash("sha256", canonicalRequest, "hex")}`;
  const signature = signingKey(credentials, day, region, service).hex(stringToSign);
  const authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  headers.authorization = authorization;
  return { canonicalRequest, stringToSign, authorization };
}

/**
 * Query parameters as SigV4 signs them: names and values URI-encoded
 * (RFC 3986), sorted by encoded name, then by encoded value (a name given
 * twice), each by code point. Not as whole `name=value` strings: "a-b=1"
 * sorts before "a=2" as text ('-' < '='), but name "a" comes first.
 */
export function canonicalQuery(query: QueryParameters): string {
  const pairs: [string, string][] = [];
  for (const name in query) {
    const encoded = uriEncode(name);
    const values = query[name];
    for (const value of typeof values === "string" ? [values] : values) pairs.push([encoded, uriEncode(value)]);
  }
  // Encoded strings are ASCII: comparing UTF-16 units is comparing code points (bytes).
  pairs.sort(([nameA, valueA], [nameB, valueB]) => (nameA < nameB ? -1 : nameA > nameB ? 1 : valueA < valueB ? -1 : valueA > valueB ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join("&");
}
/** encodeURIComponent plus the RFC 3986 reserved !'()*, as SigV4 and S3 key paths want them. */
export function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The query parameters of a presigned URL (SigV4 in the query string): the
 * URL's holder may send `method` to `path` on `host` until `expiresIn`
 * seconds after `nowMs`, without credentials. Only Host is signed, and the
 * payload is UNSIGNED-PAYLOAD, as the SDK's presigner does.
 */
export function presignedQuery(
  method: string,
  host: string,
  path: string,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  expiresIn: number,
): Record<string, string> {
  const date = amzDate(nowMs);
  const day = date.slice(0, 8);
  const scope = `${day}/${region}/${service}/aws4_request`;
  const query: Record<string, string> = {
    "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
    "X-Amz-Credential": `${credentials.accessKeyId}/${scope}`,
    "X-Amz-Date": date,
    "X-Amz-Expires": String(expiresIn),
    "X-Amz-SignedHeaders": "host",
  };
  if (credentials.sessionToken) query["X-Amz-Security-Token"] = credentials.sessionToken;
  const canonicalRequest = `${method}\n${path}\n${canonicalQuery(query)}\nhost:${host}\n\nhost\nUNSIGNED-PAYLOAD`;
  const stringToSign = `AWS4-HMAC-SHA256\n${date}\n${scope}\n${hash("sha256", canonicalRequest, "hex")}`;
  query["X-Amz-Signature"] = signingKey(credentials, day, region, service).hex(stringToSign);
  return query;
}

/** A query string of already-chosen parameters, encoded as SigV4 signs them. */
export function queryString(query: Record<string, string>): string {
  return canonicalQuery(query);
}

/** An encoded path: unreserved characters, '/', and %XX escapes. */
const USUAL_PATH = /^\/(?:[A-Za-z0-9\-._~/]|%[0-9A-F]{2})*$/;
const USUAL_HEADER_NAME = /^[A-Za-z0-9-]+$/;
/** Printable ASCII words separated by single spaces (nothing to trim or collapse). */
const USUAL_HEADER_VALUE = /^(?:[\x21-\x7e]+(?: [\x21-\x7e]+)*)?$/;
const USUAL_QUERY_TEXT = /^[\x20-\x7e]*$/;

/** Whether the hand-written signer has been checked on input like this (see the module's comment). */
export function isUsualRequest(path: string, headers: Record<string, string>, query: QueryParameters): boolean {
  if (!USUAL_PATH.test(path)) return false;
  for (const name in headers) if (!USUAL_HEADER_NAME.test(name) || !USUAL_HEADER_VALUE.test(headers[name])) return false;
  for (const name in query) {
    if (!USUAL_QUERY_TEXT.test(name)) return false;
    const values = query[name];
    for (const value of typeof values === "string" ? [values] : values) if (!USUAL_QUERY_TEXT.test(value)) return false;
  }
  return true;
}

/**
 * signHeaders for every request: the hand-written signer for usual input,
 * @smithy/signature-v4 for the rest. Says which one signed.
 */
export async function signHeadersSafely(
  method: string,
  path: string,
  headers: Record<string, string>,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  query: QueryParameters = {},
): Promise<"s3x" | "library"> {
  if (isUsualRequest(path, headers, query)) {
    signHeaders(method, path, headers, credentials, region, service, nowMs, query);
    return "s3x";
  }
  await signWithLibrary(method, path, headers, credentials, region, service, nowMs, query);
  return "library";
}

/** SHA-256 and HMAC-SHA256 for the SDK's signer, from Node's crypto (as the SDK's own on Node). */
class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", sourceBytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(sourceBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

function sourceBytes(data: SourceData): string | Buffer {
  if (typeof data === "string") return data;
  return ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);
}

/** One library signer per credentials, region and service, so its signing-key cache is kept. */
const librarySigners = new WeakMap<SigningCredentials, Map<string, SignatureV4>>();

/**
 * Signs as signHeaders does (headers holding host; the payload's hash in
 * x-amz-content-sha256, else the empty payload's), through
 * @smithy/signature-v4: S3's path as is (no second encoding).
 */
export async function signWithLibrary(
  method: string,
  path: string,
  headers: Record<string, string>,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  query: QueryParameters = {},
): Promise<void> {
  let signers = librarySigners.get(credentials);
  if (!signers) librarySigners.set(credentials, (signers = new Map()));
  const scope = `${region}/${service}`;
  let signer = signers.get(scope);
  if (!signer) {
    signer = new SignatureV4({ credentials, region, service, sha256: NodeSha256, uriEscapePath: false, applyChecksum: false });
    signers.set(scope, signer);
  }
  const host = Object.entries(headers).find(([name]) => name.toLowerCase() === "host")?.[1] ?? "";
  const request = new HttpRequest({ method, protocol: "https:", hostname: host, path, query: { ...query }, headers: { ...headers } });
  const signed = await signer.sign(request, { signingDate: new Date(nowMs) });
  for (const name of ["authorization", "x-amz-date", "x-amz-security-token"]) {
    const value = signed.headers[name];
    if (value !== undefined) headers[name] = value;
  }
}
