import { Agent, createServer, request, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { once } from "node:events";
import { crc32 } from "node:zlib";
import { createHash } from "node:crypto";
import { Crc32cJs, Crc64NvmeJs } from "@aws-sdk/checksums/crc";
import { DeleteObjectCommand, GetObjectCommand, ListPartsCommand, S3Client } from "@aws-sdk/client-s3";

/**
 * FAKE: stands in for AWS S3's additional-checksum behaviour, which the real
 * server of the tests (Ceph radosgw 16) lacks: it neither checks, stores nor
 * returns `x-amz-checksum-*`, and never demands Content-MD5 on DeleteObjects.
 *
 * An HTTP/1.1 reverse proxy in front of radosgw. Every request is forwarded
 * with the same method, path+query and headers (Host included, so the
 * client's SigV4 signature still verifies; only unsigned hop-by-hop headers
 * are dropped) and every stored byte lives in radosgw. On top of that it does
 * what AWS does with checksums:
 *  - PutObject / UploadPart with `x-amz-checksum-<alg>`: verifies the body
 *    and answers 400 BadDigest without letting radosgw store anything;
 *  - CreateMultipartUpload / CompleteMultipartUpload: remembers the algorithm
 *    and type, reads the completed object back and computes its real
 *    FULL_OBJECT or COMPOSITE checksum; a wrong claimed value is BadDigest
 *    (and the object radosgw already completed is deleted);
 *  - HEAD / GET with `x-amz-checksum-mode: ENABLED`: returns the recorded
 *    checksum (GET only for the whole object or, COMPOSITE, one part: GET
 *    ?partNumber, which radosgw 16 ignores, is served as a Range);
 *  - CopyObject keeps the source's checksum; overwrites/deletes forget it;
 *  - fault hooks: corrupt a byte of GET bodies; demand Content-MD5 on
 *    DeleteObjects as some S3-compatible stores do.
 * Checksums are computed with implementations independent of s3x's own
 * (@node-rs/crc32): node:zlib, @aws-sdk/checksums' pure-JS CRCs, node:crypto.
 * Not emulated: aws-chunked bodies / trailer checksums (answered 501, loudly),
 * per-part checks at Complete, virtual-hosted-style addressing.
 */

export type ChecksumAlgorithm = "CRC32" | "CRC32C" | "CRC64NVME" | "SHA256";
export type ChecksumType = "FULL_OBJECT" | "COMPOSITE";
const ALGORITHMS: readonly ChecksumAlgorithm[] = ["CRC32", "CRC32C", "CRC64NVME", "SHA256"];

export interface RecordedChecksum {
  algorithm: ChecksumAlgorithm;
  type: ChecksumType;
  /** What the client said it was (header or Complete body), if it said. */
  claimed?: string;
  /** What the stored bytes really give (COMPOSITE: base64 + `-N`). */
  actual: string;
}
export interface PartChecksum { partNumber: number; checksum: string; length: number }
export interface LoggedRequest { method: string; path: string; query: string; status: number }
export interface FakeChecksumStoreOptions { endpoint: string; accessKeyId: string; secretAccessKey: string; region?: string }

interface Hasher { update(data: Uint8Array): void; digest(): Promise<Buffer> }
interface ObjectRecord extends RecordedChecksum { etag?: string; size: number; parts?: { checksum: string; offset: number; length: number }[] }
interface Upload { bucket: string; key: string; algorithm?: ChecksumAlgorithm; type?: ChecksumType; parts: Map<number, PartChecksum> }
interface Corruption { bucket: string; key: string; offset: number; times: number }

/** An independent implementation of each algorithm (never the one s3x uses). */
export function checksumHasher(algorithm: ChecksumAlgorithm): Hasher {
  if (algorithm === "CRC32") {
    let crc = 0;
    return {
      update: (data) => void (crc = crc32(data, crc)),
      digest: async () => { const b = Buffer.alloc(4); b.writeUInt32BE(crc >>> 0); return b; },
    };
  }
  if (algorithm === "SHA256") {
    const hash = createHash("sha256");
    return { update: (data) => void hash.update(data), digest: async () => hash.copy().digest() };
  }
  const crc = algorithm === "CRC32C" ? new Crc32cJs() : new Crc64NvmeJs();
  return { update: (data) => crc.update(data), digest: async () => Buffer.from(await crc.digest()) };
}

/** The checksum header a request carries, if any (first in ALGORITHMS order). */
function checksumHeader(headers: IncomingHttpHeaders): { algorithm: ChecksumAlgorithm; value: string } | undefined {
  for (const algorithm of ALGORITHMS) {
    const value = headers[`x-amz-checksum-${algorithm.toLowerCase()}`];
    if (typeof value === "string") return { algorithm, value };
  }
  return undefined;
}

const asAlgorithm = (v: unknown): ChecksumAlgorithm | undefined =>
  ALGORITHMS.find((a) => typeof v === "string" && a === v.toUpperCase());
const asType = (v: unknown): ChecksumType | undefined =>
  v === "FULL_OBJECT" || v === "COMPOSITE" ? v : undefined;
// AWS's default when only an algorithm is named: CRC64NVME can only be full-object.
const defaultType = (a: ChecksumAlgorithm): ChecksumType => (a === "CRC64NVME" ? "FULL_OBJECT" : "COMPOSITE");
/** Compare checksums ignoring a composite `-N` suffix (clients may omit it). */
const sameChecksum = (a: string, b: string): boolean => a.replace(/-\d+$/, "") === b.replace(/-\d+$/, "");
const is2xx = (status: number | undefined): boolean => status !== undefined && status >= 200 && status < 300;
const xmlUnescape = (s: string): string =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** [start, end] (inclusive) of the object that a response body covers, and the object's size. */
function bodySpan(res: IncomingMessage): { start: number; end: number; size: number } {
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(res.headers["content-range"] ?? ""));
  if (m) return { start: Number(m[1]), end: Number(m[2]), size: Number(m[3]) };
  const size = Number(res.headers["content-length"] ?? 0);
  return { start: 0, end: size - 1, size };
}

// Hop-by-hop headers (and Expect: node answers 100-continue itself) are this proxy's own business; SigV4 never signs them.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "expect", "proxy-connection", "upgrade", "te"]);

export class FakeChecksumStore {
  readonly requests: LoggedRequest[] = [];
  corruptionsApplied = 0;
  readonly deleteObjects = { refused: 0, accepted: 0 };
  port = 0;
  url = "";

  private readonly target: URL;
  private readonly agent = new Agent({ keepAlive: true });
  private readonly s3: S3Client;
  private readonly server: Server;
  private readonly records = new Map<string, ObjectRecord>();
  private readonly uploads = new Map<string, Upload>();
  private corruptions: Corruption[] = [];
  private md5OnDelete = false;

  constructor(options: FakeChecksumStoreOptions) {
    this.target = new URL(options.endpoint);
    // Its own client talks to radosgw directly, to read back what was stored.
    this.s3 = new S3Client({
      endpoint: options.endpoint,
      region: options.region ?? "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 502, "FakeChecksumStoreError", String(err));
        else res.destroy();
      });
    });
  }

  /** Listens on 127.0.0.1 at a random port; resolves to `this`. */
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
    this.s3.destroy();
  }

  checksumOf(bucket: string, key: string): RecordedChecksum | undefined {
    const r = this.records.get(`${bucket}/${key}`);
    return r && { algorithm: r.algorithm, type: r.type, ...(r.claimed !== undefined ? { claimed: r.claimed } : {}), actual: r.actual };
  }

  /** Per-part checksums the fake computed itself from the UploadPart bodies. */
  partChecksums(uploadId: string): PartChecksum[] {
    return [...(this.uploads.get(uploadId)?.parts.values() ?? [])].sort((a, b) => a.partNumber - b.partNumber);
  }

  /** Flip (XOR 0x01) the byte at object `offset` in the next `times` GET bodies that contain it. */
  corrupt(c: { bucket: string; key: string; offset: number; times?: number }): void {
    this.corruptions.push({ ...c, times: c.times ?? 1 });
  }

  requireContentMd5OnDeleteObjects(on: boolean): void {
    this.md5OnDelete = on;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const q = url.searchParams;
    const entry: LoggedRequest = { method: req.method ?? "", path: url.pathname, query: url.search.slice(1), status: 0 };
    this.requests.push(entry);
    res.on("finish", () => (entry.status = res.statusCode));
    // Path-style addressing: /bucket/key (the client is pointed at an IP address).
    const [bucket = "", ...rest] = url.pathname.slice(1).split("/");
    const key = decodeURIComponent(rest.join("/"));
    const uploadId = q.get("uploadId");
    const copy = req.headers["x-amz-copy-source"] !== undefined;
    // Plain object operations only: ?tagging, ?acl and the like are not about the object's bytes.
    const only = (...names: string[]): boolean => [...q.keys()].every((n) => n === "x-id" || n === "versionId" || names.includes(n));
    const part = uploadId !== null && q.has("partNumber") && only("uploadId", "partNumber");

    if (req.method === "PUT" && key && !copy && (only() || part)) return this.put(req, res, bucket, key, uploadId, Number(q.get("partNumber")));
    if (req.method === "PUT" && key && copy && only()) return this.copy(req, res, bucket, key);
    if (req.method === "POST" && q.has("uploads")) return this.createUpload(req, res, bucket, key);
    if (req.method === "POST" && uploadId !== null) return this.complete(req, res, bucket, key, uploadId);
    if (req.method === "POST" && q.has("delete")) return this.deleteMany(req, res, bucket);
    const responseOverrides = [...q.keys()].filter((n) => n.startsWith("response-"));
    if ((req.method === "GET" || req.method === "HEAD") && key && only("partNumber", ...responseOverrides)) {
      return this.download(req, res, bucket, key, q.get("partNumber"));
    }
    const upRes = await this.forward(req, res);
    // (Uploads are kept after Complete/Abort, so partChecksums() still answers.)
    if (req.method === "DELETE" && key && uploadId === null && only() && is2xx(upRes.statusCode)) this.records.delete(`${bucket}/${key}`);
    this.relay(upRes, res);
  }

  /** PutObject and UploadPart: hash while streaming, holding back the last chunk until the digest is known. */
  private async put(req: IncomingMessage, res: ServerResponse, bucket: string, key: string, uploadId: string | null, partNumber: number): Promise<void> {
    const claim = checksumHeader(req.headers);
    const upload = uploadId === null ? undefined : this.uploads.get(uploadId);
    const algorithm = claim?.algorithm ?? upload?.algorithm;
    const trailer = req.headers["x-amz-trailer"] !== undefined;
    if (trailer || (algorithm && String(req.headers["x-amz-content-sha256"]).startsWith("STREAMING-"))) {
      // Checking an aws-chunked body would need it decoded; fail loudly rather than silently not check.
      await readAll(req);
      return sendError(res, 501, "NotImplemented", "FakeChecksumStore does not decode aws-chunked bodies or trailer checksums");
    }
    const hasher = algorithm && checksumHasher(algorithm);
    const up = this.upstream(req, res);
    const response = once(up, "response") as Promise<[IncomingMessage]>;
    response.catch(() => undefined); // the request may be destroyed below
    let held: Buffer | undefined;
    let length = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      hasher?.update(chunk);
      length += chunk.length;
      if (held && !up.write(held)) await once(up, "drain");
      held = chunk;
    }
    const actual = hasher && (await hasher.digest()).toString("base64");
    if (claim && actual !== claim.value) {
      // radosgw never sees the whole body, so it stores nothing (as AWS would).
      sendError(res, 400, "BadDigest", `The ${claim.algorithm} you specified did not match the calculated checksum.`);
      return void up.destroy();
    }
    up.end(held);
    const [upRes] = await response;
    if (is2xx(upRes.statusCode)) {
      if (upload && actual) upload.parts.set(partNumber, { partNumber, checksum: actual, length });
      if (uploadId === null) {
        if (claim && actual) {
          const etag = upRes.headers.etag;
          this.records.set(`${bucket}/${key}`, { algorithm: claim.algorithm, type: "FULL_OBJECT", claimed: claim.value, actual, size: length, etag });
        } else this.records.delete(`${bucket}/${key}`);
      }
    }
    // AWS echoes the verified checksum on the response.
    const extra = claim && is2xx(upRes.statusCode) ? [`x-amz-checksum-${claim.algorithm.toLowerCase()}`, claim.value] : [];
    this.relay(upRes, res, extra);
  }

  /** CopyObject: AWS keeps the source's kind of checksum (unless asked for another); recomputed from the copy. */
  private async copy(req: IncomingMessage, res: ServerResponse, bucket: string, key: string): Promise<void> {
    const source = this.records.get(decodeURIComponent(String(req.headers["x-amz-copy-source"]).split("?")[0]).replace(/^\//, ""));
    const upRes = await this.forward(req, res);
    const body = await readAll(upRes);
    if (is2xx(upRes.statusCode) && !body.includes("<Error>")) {
      this.records.delete(`${bucket}/${key}`);
      if (source && !req.headers["x-amz-checksum-algorithm"]) {
        const copied = await this.readBack(bucket, key, source.algorithm, source.parts?.map((p) => p.length));
        this.records.set(`${bucket}/${key}`, { ...source, ...copied });
      }
    }
    this.reply(upRes, res, body);
  }

  private async createUpload(req: IncomingMessage, res: ServerResponse, bucket: string, key: string): Promise<void> {
    const algorithm = asAlgorithm(req.headers["x-amz-checksum-algorithm"]);
    const type = algorithm && (asType(req.headers["x-amz-checksum-type"]) ?? defaultType(algorithm));
    const upRes = await this.forward(req, res);
    const body = await readAll(upRes);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(body.toString())?.[1];
    if (is2xx(upRes.statusCode) && uploadId) this.uploads.set(xmlUnescape(uploadId), { bucket, key, algorithm, type, parts: new Map() });
    this.reply(upRes, res, body, algorithm && type ? ["x-amz-checksum-algorithm", algorithm, "x-amz-checksum-type", type] : []);
  }

  private async complete(req: IncomingMessage, res: ServerResponse, bucket: string, key: string, uploadId: string): Promise<void> {
    const requestBody = await readAll(req);
    const xml = requestBody.toString();
    // The claim is the checksum element at the top level, not one inside a <Part>.
    const topLevel = xml.replace(/<Part>[\s\S]*?<\/Part>/g, "");
    const element = /<Checksum(CRC32C|CRC32|CRC64NVME|SHA256)>([^<]*)</.exec(topLevel);
    const claim = checksumHeader(req.headers) ?? (element ? { algorithm: element[1] as ChecksumAlgorithm, value: element[2].trim() } : undefined);
    const partNumbers = [...xml.matchAll(/<PartNumber>\s*(\d+)\s*<\/PartNumber>/g)].map((m) => Number(m[1]));
    const upload = this.uploads.get(uploadId);
    const algorithm = upload?.algorithm ?? claim?.algorithm;
    const type = upload?.type ?? asType(req.headers["x-amz-checksum-type"]) ?? (algorithm && defaultType(algorithm));
    // Part sizes are only listable before completion; a COMPOSITE checksum needs them.
    const sizes = algorithm && type === "COMPOSITE" ? await this.partSizes(bucket, key, uploadId, partNumbers) : undefined;

    const upRes = await this.forward(req, res, requestBody);
    const body = await readAll(upRes);
    // radosgw may answer 200 and then report the error in the body.
    if (!is2xx(upRes.statusCode) || body.includes("<Error>")) return this.reply(upRes, res, body);
    const id = `${bucket}/${key}`;
    if (!algorithm || !type) {
      this.records.delete(id);
      return this.reply(upRes, res, body);
    }
    const actual = await this.readBack(bucket, key, algorithm, sizes);
    if (claim && (claim.algorithm !== algorithm || !sameChecksum(claim.value, actual.actual))) {
      // AWS would refuse to complete; here the object exists already, so remove it.
      this.records.delete(id);
      await this.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      return sendError(res, 400, "BadDigest", `The ${claim.algorithm} you specified for the object did not match the calculated checksum.`);
    }
    // (radosgw 16's Complete result has an empty <ETag>, so the read-back's is used.)
    this.records.set(id, { algorithm, type, claimed: claim?.value, ...actual });
    // AWS reports the object's checksum and type in the Complete result.
    const extra = `<Checksum${algorithm}>${actual.actual}</Checksum${algorithm}><ChecksumType>${type}</ChecksumType>`;
    this.reply(upRes, res, Buffer.from(body.toString().replace("</CompleteMultipartUploadResult>", `${extra}</CompleteMultipartUploadResult>`)));
  }

  private async partSizes(bucket: string, key: string, uploadId: string, partNumbers: number[]): Promise<number[]> {
    const sizes = new Map<number, number>();
    let marker: string | undefined;
    do {
      const out = await this.s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }));
      for (const p of out.Parts ?? []) sizes.set(p.PartNumber ?? 0, p.Size ?? 0);
      marker = out.IsTruncated ? out.NextPartNumberMarker : undefined;
    } while (marker);
    return partNumbers.map((n) => sizes.get(n) ?? 0);
  }

  /** Streams the stored object and computes its whole (or, given part sizes, composite) checksum. */
  private async readBack(bucket: string, key: string, algorithm: ChecksumAlgorithm, sizes?: number[]): Promise<{ actual: string; size: number; etag?: string; parts?: ObjectRecord["parts"] }> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const whole = checksumHasher(algorithm);
    const digests: Buffer[] = [];
    let part = 0;
    let left = sizes?.[0] ?? 0;
    let partHasher = checksumHasher(algorithm);
    let size = 0;
    const finishParts = async (): Promise<void> => {
      while (sizes && part < sizes.length && left === 0) {
        digests.push(await partHasher.digest());
        partHasher = checksumHasher(algorithm);
        left = sizes[++part] ?? 0;
      }
    };
    await finishParts(); // empty parts
    for await (let chunk of out.Body as AsyncIterable<Buffer>) {
      whole.update(chunk);
      size += chunk.length;
      while (sizes && part < sizes.length && chunk.length > 0) {
        const take = Math.min(left, chunk.length);
        partHasher.update(chunk.subarray(0, take));
        chunk = chunk.subarray(take);
        left -= take;
        await finishParts();
      }
    }
    if (!sizes) return { actual: (await whole.digest()).toString("base64"), size, etag: out.ETag };
    const combined = checksumHasher(algorithm);
    combined.update(Buffer.concat(digests));
    let offset = 0;
    const parts = digests.map((d, i) => ({ checksum: d.toString("base64"), offset: (offset += sizes[i]) - sizes[i], length: sizes[i] }));
    return { actual: `${(await combined.digest()).toString("base64")}-${digests.length}`, size, etag: out.ETag, parts };
  }

  private async deleteMany(req: IncomingMessage, res: ServerResponse, bucket: string): Promise<void> {
    const body = await readAll(req);
    if (this.md5OnDelete && req.headers["content-md5"] !== createHash("md5").update(body).digest("base64")) {
      this.deleteObjects.refused++;
      return sendError(res, 400, "InvalidRequest", "Missing required header for this request: Content-MD5");
    }
    this.deleteObjects.accepted++;
    const upRes = await this.forward(req, res, body);
    if (is2xx(upRes.statusCode)) {
      for (const m of body.toString().matchAll(/<Key>([^<]*)<\/Key>/g)) this.records.delete(`${bucket}/${xmlUnescape(m[1])}`);
    }
    this.relay(upRes, res);
  }

  private async download(req: IncomingMessage, res: ServerResponse, bucket: string, key: string, partNumber: string | null): Promise<void> {
    const record = this.records.get(`${bucket}/${key}`);
    // radosgw 16 ignores ?partNumber on GET; a Range (unsigned, so SigV4 is unaffected) makes the body that part, as on AWS.
    const wanted = partNumber !== null && req.method === "GET" && !req.headers.range ? record?.parts?.[Number(partNumber) - 1] : undefined;
    const range = wanted && wanted.length > 0 ? { range: `bytes=${wanted.offset}-${wanted.offset + wanted.length - 1}` } : undefined;
    const upRes = await this.forward(req, res, undefined, range);
    const span = bodySpan(upRes);
    const extra: string[] = [];
    // Only while radosgw still holds the very object that was recorded.
    if (is2xx(upRes.statusCode) && record && record.etag === upRes.headers.etag && req.headers["x-amz-checksum-mode"] === "ENABLED") {
      const part = partNumber === null ? undefined : record.parts?.[Number(partNumber) - 1];
      const headOrWhole = req.method === "HEAD" || (span.start === 0 && span.end === span.size - 1);
      // A part's own checksum only if the body is exactly that part.
      const isPart = part && (req.method === "HEAD" || (span.start === part.offset && span.end === part.offset + part.length - 1));
      const value = partNumber === null ? (headOrWhole ? record.actual : undefined) : isPart ? part.checksum : undefined;
      if (value) extra.push(`x-amz-checksum-${record.algorithm.toLowerCase()}`, value, "x-amz-checksum-type", record.type);
    }
    // HEAD ?partNumber=N on AWS describes part N: its length and the object's part count.
    const headPart = req.method === "HEAD" && is2xx(upRes.statusCode) && partNumber !== null && record?.etag === upRes.headers.etag ? record?.parts?.[Number(partNumber) - 1] : undefined;
    if (headPart && record?.parts) {
      extra.push("content-length", String(headPart.length), "x-amz-mp-parts-count", String(record.parts.length));
      return this.relay(upRes, res, extra, ["content-length"]);
    }
    const hits = req.method === "GET" && is2xx(upRes.statusCode) ? this.claimCorruptions(bucket, key, span.start, span.end) : [];
    if (hits.length === 0) return this.relay(upRes, res, extra);
    let position = span.start;
    res.writeHead(upRes.statusCode ?? 502, [...this.responseHeaders(upRes), ...extra]);
    for await (const chunk of upRes as AsyncIterable<Buffer>) {
      let out = chunk;
      for (const offset of hits) {
        if (offset >= position && offset < position + chunk.length) {
          if (out === chunk) out = Buffer.from(chunk); // never modify a buffer we do not own
          out[offset - position] ^= 0x01;
          this.corruptionsApplied++;
        }
      }
      position += chunk.length;
      if (!res.write(out)) await once(res, "drain");
    }
    res.end();
  }

  /** The object offsets to corrupt in a body covering [start, end]; each use counts against `times`. */
  private claimCorruptions(bucket: string, key: string, start: number, end: number): number[] {
    const hits: number[] = [];
    for (const c of this.corruptions) {
      if (c.bucket === bucket && c.key === key && c.times > 0 && c.offset >= start && c.offset <= end) {
        c.times--;
        hits.push(c.offset);
      }
    }
    this.corruptions = this.corruptions.filter((c) => c.times > 0);
    return hits;
  }

  /** A request to radosgw with the client's method, path+query and headers (Host included). */
  private upstream(req: IncomingMessage, res: ServerResponse, extra: OutgoingHttpHeaders = {}): ClientRequest {
    const headers: OutgoingHttpHeaders = { ...extra };
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    const up = request({ host: this.target.hostname, port: this.target.port || 80, method: req.method, path: req.url, headers, agent: this.agent });
    // Errors surface through the awaited 'response'/'drain'; this keeps a late one from crashing the test run.
    up.on("error", () => res.writableEnded || res.destroy());
    req.on("error", () => up.destroy());
    // The client went away before its answer was complete: stop the upstream exchange too.
    res.on("close", () => res.writableFinished || up.destroy());
    return up;
  }

  /** Forwards a request, streaming its body unless the body was already read. */
  private async forward(req: IncomingMessage, res: ServerResponse, body?: Buffer, extra?: OutgoingHttpHeaders): Promise<IncomingMessage> {
    const up = this.upstream(req, res, extra);
    const response = once(up, "response") as Promise<[IncomingMessage]>;
    if (body) up.end(body);
    else req.pipe(up);
    return (await response)[0];
  }

  /** radosgw's response headers as a flat [name, value, ...] list, minus hop-by-hop and `skip`. */
  private responseHeaders(upRes: IncomingMessage, skip: string[] = []): string[] {
    const out: string[] = [];
    for (let i = 0; i < upRes.rawHeaders.length; i += 2) {
      const name = upRes.rawHeaders[i].toLowerCase();
      if (!HOP_BY_HOP.has(name) && !skip.includes(name)) out.push(upRes.rawHeaders[i], upRes.rawHeaders[i + 1]);
    }
    return out;
  }

  /** Streams radosgw's answer to the client, with extra headers. */
  private relay(upRes: IncomingMessage, res: ServerResponse, extra: string[] = [], skip: string[] = []): void {
    res.writeHead(upRes.statusCode ?? 502, [...this.responseHeaders(upRes, skip), ...extra]);
    upRes.on("error", () => res.destroy());
    upRes.pipe(res);
  }

  /** Sends a buffered (possibly rewritten) answer, with a Content-Length to match. */
  private reply(upRes: IncomingMessage, res: ServerResponse, body: Buffer, extra: string[] = []): void {
    const headers = this.responseHeaders(upRes, ["content-length", "transfer-encoding"]);
    res.writeHead(upRes.statusCode ?? 502, [...headers, "content-length", String(body.length), ...extra]);
    res.end(body);
  }
}
