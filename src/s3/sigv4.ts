import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";

/** What the library's hash interface is given: text or bytes. */
type SourceData = string | ArrayBuffer | ArrayBufferView;

/**
 * AWS Signature Version 4 for the requests s3x builds itself (s3/request.ts:
 * object GETs and PUTs, UploadPart's partNumber/uploadId query) and for
 * presigned URLs (s3/presign.ts), by the SDK's own signer,
 * @smithy/signature-v4, one per credentials, region and service so its
 * signing-key cache is kept.
 *
 * s3x had a hand-written signer here (one-shot hashes over precomputed HMAC
 * pads). Signing alone it cost 16 µs of CPU per request against the
 * library's 82 (bench/sign.ts, 9 interleaved rounds of 2,000), but end to
 * end the difference drowned in noise: 2,000 × 64 KiB downloads (bench/ab.ts,
 * one radosgw, load average ~20), three runs of 7, 5 and 9 interleaved
 * pairs, per-pair library-minus-own client CPU-s medians +1.00, -0.10 and
 * -0.01; the library cost more in 12 pairs of 21. So the library signs.
 */

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Query parameters, unencoded; a name given several times has a list of values. */
export type QueryParameters = Record<string, string | string[]>;

/** SHA-256 and HMAC-SHA256 for the SDK's signer, from Node's crypto (as the SDK's own on Node). */
export class NodeSha256 {
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

/**
 * The library's signers, one per credentials object, region and service, so
 * each keeps its derived signing key for the day. One per connection
 * (s3/request.ts), never module-wide: the request path holds no shared state.
 */
export class Signers {
  private readonly byCredentials = new WeakMap<SigningCredentials, Map<string, SignatureV4>>();

  for(credentials: SigningCredentials, region: string, service: string): SignatureV4 {
    let byScope = this.byCredentials.get(credentials);
    if (!byScope) this.byCredentials.set(credentials, (byScope = new Map()));
    const scope = `${region}/${service}`;
    let signer = byScope.get(scope);
    if (!signer) {
      // S3 signs the path as sent (no second encoding); the payload hash is the caller's (x-amz-content-sha256).
      signer = new SignatureV4({ credentials, region, service, sha256: NodeSha256, uriEscapePath: false, applyChecksum: false });
      byScope.set(scope, signer);
    }
    return signer;
  }
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  return Object.entries(headers).find(([n]) => n.toLowerCase() === name)?.[1];
}

/**
 * Adds x-amz-date, x-amz-security-token (temporary credentials) and
 * Authorization to `headers`, which must already hold host and
 * x-amz-content-sha256. `path` is the URI path exactly as sent; `query` the
 * request's query parameters, unencoded.
 */
export async function signHeaders(
  method: string,
  path: string,
  headers: Record<string, string>,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  query: QueryParameters = {},
  signers = new Signers(),
): Promise<void> {
  if (headerValue(headers, "x-amz-content-sha256") === undefined) throw new Error("signHeaders: x-amz-content-sha256 must be set");
  await signWithPayloadHeader(method, path, headers, credentials, region, service, nowMs, query, signers);
}

/**
 * signHeaders without S3's rule that the payload hash is a header: with no
 * x-amz-content-sha256 the payload is the empty one (SigV4's generic form,
 * as in AWS's test suite).
 */
export async function signWithPayloadHeader(
  method: string,
  path: string,
  headers: Record<string, string>,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  query: QueryParameters = {},
  signers = new Signers(),
): Promise<void> {
  const host = headerValue(headers, "host") ?? "";
  // A plain request object: the library clones whatever it is given into its own HttpRequest.
  const request = { method, protocol: "https:", hostname: host, path, query: { ...query }, headers: { ...headers } };
  const signed = await signers.for(credentials, region, service).sign(request, { signingDate: new Date(nowMs) });
  for (const name of ["authorization", "x-amz-date", "x-amz-security-token"]) {
    const value = signed.headers[name];
    if (value !== undefined) headers[name] = value;
  }
}

/**
 * Query parameters as SigV4 signs them, which is also how a URL carries them:
 * names and values URI-encoded (RFC 3986), sorted by encoded name, then by
 * encoded value, each by code point.
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
 * seconds after `nowMs`, without credentials. As the SDK's S3 presigner:
 * only Host is signed, and the payload is UNSIGNED-PAYLOAD.
 */
export async function presignedQuery(
  method: string,
  host: string,
  path: string,
  credentials: SigningCredentials,
  region: string,
  service: string,
  nowMs: number,
  expiresIn: number,
  signers = new Signers(),
): Promise<Record<string, string>> {
  const request = { method, protocol: "https:", hostname: host, path, query: {}, headers: { host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" } };
  const unsigned = new Set(["x-amz-content-sha256"]);
  const signed = await signers.for(credentials, region, service).presign(request, { signingDate: new Date(nowMs), expiresIn, unhoistableHeaders: unsigned, unsignableHeaders: unsigned });
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.query ?? {})) if (typeof value === "string") query[name] = value;
  return query;
}

/** A query string of already-chosen parameters, encoded as SigV4 signs them. */
export function queryString(query: Record<string, string>): string {
  return canonicalQuery(query);
}
