import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from "./sdk.js";
import { attributeHeaders, attributeInput, type ObjectAttributes, type StorageSettings } from "./attributes.js";

export type { ObjectAttributes, StorageSettings } from "./attributes.js";
import type { Readable } from "node:stream";
import { ResponseBody } from "../net/response-body.js";
import { send } from "./send.js";
import { canSendDirectly, directCopy, directGet, directPut, directUploadPart, errorOf, type DirectResponse } from "./direct.js";

/** An object in a bucket. */
export interface ObjectRef {
  bucket: string;
  key: string;
}

/** The additional checksums S3 stores (x-amz-checksum-*), by S3's names. */
export type ChecksumAlgorithm = "CRC32" | "CRC32C" | "CRC64NVME" | "SHA256";

/** FULL_OBJECT: a CRC of all the bytes; COMPOSITE: a checksum of the part checksums, "-N". */
export type ChecksumType = "FULL_OBJECT" | "COMPOSITE";

/** A checksum as S3 carries it in headers and XML: base64 of the big-endian digest. */
export interface ChecksumValue {
  algorithm: ChecksumAlgorithm;
  base64: string;
}

type ChecksumField = "ChecksumCRC32" | "ChecksumCRC32C" | "ChecksumCRC64NVME" | "ChecksumSHA256";

const CHECKSUM_FIELDS: Record<ChecksumAlgorithm, ChecksumField> = {
  CRC32: "ChecksumCRC32",
  CRC32C: "ChecksumCRC32C",
  CRC64NVME: "ChecksumCRC64NVME",
  SHA256: "ChecksumSHA256",
};

/** The SDK input member that carries a checksum (sent as x-amz-checksum-<alg>, a header, never a trailer). */
function checksumInput(value: ChecksumValue | undefined): Partial<Record<ChecksumField, string>> {
  return value ? { [CHECKSUM_FIELDS[value.algorithm]]: value.base64 } : {};
}

/** The checksum a response carries, if any (only one algorithm is stored per object). */
function checksumOutput(out: Partial<Record<ChecksumField, string>> & { ChecksumType?: string }): { checksum?: ChecksumValue; checksumType?: ChecksumType } {
  for (const [algorithm, field] of Object.entries(CHECKSUM_FIELDS) as [ChecksumAlgorithm, ChecksumField][]) {
    const base64 = out[field];
    if (base64) {
      const type = out.ChecksumType === "FULL_OBJECT" || out.ChecksumType === "COMPOSITE" ? out.ChecksumType : undefined;
      // Without a type, a value with "-N" is a multipart composite; otherwise it covers the whole object.
      return { checksum: { algorithm, base64 }, checksumType: type ?? (/-\d+$/.test(base64) ? "COMPOSITE" : "FULL_OBJECT") };
    }
  }
  return {};
}


export interface ObjectInfo {
  size: number;
  etag: string;
  lastModified?: Date;
  contentType?: string;
  metadata?: Record<string, string>;
  /** Only when the server stores additional checksums (asked for with x-amz-checksum-mode). */
  checksum?: ChecksumValue;
  checksumType?: ChecksumType;
  /** Parts of a multipart object (x-amz-mp-parts-count), when the server says. */
  partsCount?: number;
  /** The headers a copy made in parts sets again (CopyObject copies them itself). */
  headers?: Pick<ObjectAttributes, "cacheControl" | "contentEncoding" | "contentDisposition" | "contentLanguage" | "expires">;
}

interface Call {
  signal?: AbortSignal;
}

/** HEAD of an object, or with `partNumber` of one of its parts (size = that part's length). */
export async function headObject(client: S3Client, ref: ObjectRef, call: Call & { ifMatch?: string; partNumber?: number } = {}): Promise<ObjectInfo> {
  const out = await send(client, new HeadObjectCommand({ Bucket: ref.bucket, Key: ref.key, IfMatch: call.ifMatch, PartNumber: call.partNumber }), call.signal);
  return {
    size: out.ContentLength ?? 0,
    etag: out.ETag ?? "",
    lastModified: out.LastModified,
    contentType: out.ContentType,
    metadata: out.Metadata,
    partsCount: out.PartsCount,
    headers: { cacheControl: out.CacheControl, contentEncoding: out.ContentEncoding, contentDisposition: out.ContentDisposition, contentLanguage: out.ContentLanguage, expires: out.Expires },
    ...checksumOutput(out),
  };
}

export interface RangeRequest extends Call {
  ref: ObjectRef;
  /** First byte wanted. */
  start: number;
  /** Last byte wanted (inclusive). */
  end: number;
  /** Refuse to answer (412) if the object's ETag is no longer this. */
  ifMatch?: string;
  /** The bytes land here, from `offset` on (unless `slices` is given). */
  target: Buffer;
  offset: number;
  /** The body goes to these slices as it arrives, instead of to `target`. */
  slices?: BodySlices;
  onBytes?: (n: number) => void;
  /** Called with the response's ETag as soon as headers arrive. */
  onEtag?: (etag: string) => void;
  /**
   * Ask for the whole object, with no Range header, when `start` is 0: the
   * caller knows (from a listing) that it fits in the target. A ranged GET
   * costs radosgw ~0.3 ms of CPU more than a plain one (2,000 small objects:
   * 3.0 against 2.4 server CPU-s). An object that has since grown past the
   * target fails with ObjectLargerThanBufferError, before its body is read.
   */
  whole?: boolean;
}

/**
 * Where a ranged GET's body goes when it is written out as it arrives
 * instead of held whole: the slice being filled (and how much of it holds
 * bytes already), and `full` to hand a filled slice on, resolving when the
 * next may be filled. The caller counts landed bytes through `onBytes`.
 */
export interface BodySlices {
  current(): { buffer: Buffer; filled: number };
  full(): Promise<void>;
}

/** A whole-object GET answered with more bytes than the caller's buffer holds (the object grew since it was listed). */
export class ObjectLargerThanBufferError extends Error {
  readonly code = "S3X_OBJECT_GREW";
  constructor(readonly objectSize: number) {
    super(`the object is ${objectSize} bytes now, more than listed`);
  }
}

/** The Range header for a request, or undefined for a whole-object GET. */
function rangeOf(req: RangeRequest): string | undefined {
  return req.whole && req.start === 0 ? undefined : `bytes=${req.start}-${req.end}`;
}

/** Fails a whole-object answer whose Content-Length overflows the target, freeing its connection. */
function checkFits(req: RangeRequest, contentLength: number | undefined, body: unknown): void {
  if (contentLength === undefined || contentLength <= req.target.length - req.offset) return;
  (body as { destroy?: () => void } | undefined)?.destroy?.();
  throw new ObjectLargerThanBufferError(contentLength);
}

export interface RangeResult {
  /** Bytes written into the target. */
  bytes: number;
  /** Whole object size, from Content-Range (or Content-Length of a 200). */
  objectSize: number;
  etag: string;
  lastModified?: Date;
  /** False when the server ignored the Range header and sent the whole object. */
  ranged: boolean;
  /** The stored whole-object checksum, when the server returned one (S3 does so only for whole-object reads). */
  checksum?: ChecksumValue;
  checksumType?: ChecksumType;
}

/**
 * A ranged GET whose body is copied straight into the caller's buffer; once
 * the SDK has shown where the bucket's keys live, without the SDK's
 * per-request work (s3/direct.ts).
 */
export async function getRange(client: S3Client, req: RangeRequest): Promise<RangeResult> {
  if (canSendDirectly(client, req.ref.bucket)) return getRangeDirectly(client, req);
  const range = rangeOf(req);
  const out = await send(client, new GetObjectCommand({ Bucket: req.ref.bucket, Key: req.ref.key, Range: range, IfMatch: req.ifMatch }), req.signal);
  req.onEtag?.(out.ETag ?? "");
  const ranged = out.ContentRange !== undefined;
  if (range === undefined) checkFits(req, out.ContentLength, out.Body);
  const objectSize = ranged ? parseTotal(out.ContentRange as string) : (out.ContentLength ?? 0);
  const expected = out.ContentLength ?? req.end - req.start + 1;
  const bytes = await readBody(out.Body, req, expected);
  if (bytes !== expected) {
    const err = new Error(`response body ended after ${bytes} of ${expected} bytes`) as Error & { code: string };
    err.code = "S3X_SHORT_BODY";
    throw err;
  }
  return { bytes, objectSize, etag: out.ETag ?? "", lastModified: out.LastModified, ranged, ...checksumOutput(out) };
}

async function getRangeDirectly(client: S3Client, req: RangeRequest): Promise<RangeResult> {
  // The headers the SDK path sends (s3/checksum-mode.ts asks for stored checksums there).
  const headers: Record<string, string> = { "x-amz-checksum-mode": "ENABLED" };
  const range = rangeOf(req);
  if (range !== undefined) headers.range = range;
  if (req.ifMatch !== undefined) headers["if-match"] = req.ifMatch;
  const response = await directGet(client, req.ref.bucket, req.ref.key, headers, req.signal);
  if (response.statusCode !== 200 && response.statusCode !== 206) throw await errorOf(response);
  const h = response.headers;
  const etag = h.etag ?? "";
  req.onEtag?.(etag);
  const contentLength = h["content-length"] === undefined ? undefined : Number(h["content-length"]);
  const ranged = h["content-range"] !== undefined;
  if (range === undefined) checkFits(req, contentLength, response.body);
  const objectSize = ranged ? parseTotal(h["content-range"]) : (contentLength ?? 0);
  const expected = contentLength ?? req.end - req.start + 1;
  const bytes = await readBody(response.body, req, expected);
  if (bytes !== expected) {
    const err = new Error(`response body ended after ${bytes} of ${expected} bytes`) as Error & { code: string };
    err.code = "S3X_SHORT_BODY";
    throw err;
  }
  const stored = {
    ChecksumCRC32: h["x-amz-checksum-crc32"],
    ChecksumCRC32C: h["x-amz-checksum-crc32c"],
    ChecksumCRC64NVME: h["x-amz-checksum-crc64nvme"],
    ChecksumSHA256: h["x-amz-checksum-sha256"],
    ChecksumType: h["x-amz-checksum-type"],
  };
  const lastModified = h["last-modified"] === undefined ? undefined : new Date(h["last-modified"]);
  return { bytes, objectSize, etag, lastModified, ranged, ...checksumOutput(stored) };
}

/** What a PUT or UploadPart asks of its answer's checksum: `echoed` hears the value the server sent back, if any. */
export interface ChecksumCall {
  checksum?: ChecksumValue;
  /**
   * Called with the checksum the server echoed (AWS returns the value it
   * checked; a server that ignores x-amz-checksum-* returns none): how an
   * uploader learns whether its checksum was checked at all.
   */
  echoed?: (value: ChecksumValue | undefined) => void;
}

/** The checksum of a direct answer's x-amz-checksum-* headers. */
function echoedChecksum(headers: Record<string, string>): ChecksumValue | undefined {
  return checksumOutput({
    ChecksumCRC32: headers["x-amz-checksum-crc32"],
    ChecksumCRC32C: headers["x-amz-checksum-crc32c"],
    ChecksumCRC64NVME: headers["x-amz-checksum-crc64nvme"],
    ChecksumSHA256: headers["x-amz-checksum-sha256"],
  }).checksum;
}

/** The header that carries a PUT's checksum for the server to check (as the SDK writes it). */
function addChecksumHeader(headers: Record<string, string>, checksum: ChecksumValue | undefined): void {
  if (checksum) headers[`x-amz-checksum-${checksum.algorithm.toLowerCase()}`] = checksum.base64;
}

/** The ETag a direct PUT got back, its body read to the end; an error answer is thrown as the SDK would. */
async function etagOfDirectPut(response: DirectResponse): Promise<string | undefined> {
  if (response.statusCode !== 200) throw await errorOf(response);
  await drain(response.body);
  return response.headers.etag;
}

/** Reads a response body to its end (frees the connection for the next request). */
async function drain(body: unknown): Promise<void> {
  if (body && typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") for await (const _ of body as AsyncIterable<unknown>);
}

function parseTotal(contentRange: string): number {
  // "bytes 0-8388607/1073741824"
  const slash = contentRange.lastIndexOf("/");
  const total = Number(contentRange.slice(slash + 1));
  if (!Number.isSafeInteger(total)) throw new Error(`unexpected Content-Range: ${contentRange}`);
  return total;
}

/** Reads a GET's body (`expected` bytes) into the request's target or slices; returns the bytes that arrived. */
function readBody(body: unknown, req: RangeRequest, expected: number): Promise<number> {
  if (req.slices) return body instanceof ResponseBody ? readSlices(body, req.slices, expected, req.onBytes) : copyStreamToSlices(body as Readable, req.slices, expected, req.onBytes);
  if (body instanceof ResponseBody) return body.readInto(req.target.subarray(0, req.offset + expected), req.offset, req.onBytes);
  return copyStream(body as Readable, req.target, req.offset, req.onBytes);
}

async function readSlices(body: ResponseBody, slices: BodySlices, expected: number, onBytes?: (n: number) => void): Promise<number> {
  let got = 0;
  while (got < expected) {
    const { buffer, filled } = slices.current();
    if (filled === buffer.length) {
      await slices.full(); // filled by an earlier attempt that ended right there
      continue;
    }
    const rest = expected - got;
    if (rest <= buffer.length - filled) {
      // The last slice: read to the end of the body (a slice would pause the
      // source at its last byte, before the end of the response is seen).
      const n = await body.readInto(buffer.subarray(0, filled + rest), filled, onBytes);
      got += n;
      if (filled + n === buffer.length) await slices.full();
      break;
    }
    const n = await body.readSlice(buffer, filled, onBytes);
    got += n;
    if (filled + n < buffer.length) break; // the body ended early: the caller reports it short
    await slices.full();
  }
  return got;
}

async function copyStreamToSlices(stream: Readable, slices: BodySlices, expected: number, onBytes?: (n: number) => void): Promise<number> {
  let got = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (got + chunk.length > expected) throw new Error("response body longer than the requested range");
    for (let taken = 0; taken < chunk.length; ) {
      const { buffer, filled } = slices.current();
      if (filled === buffer.length) {
        await slices.full();
        continue;
      }
      const n = Math.min(buffer.length - filled, chunk.length - taken);
      chunk.copy(buffer, filled, taken, taken + n);
      taken += n;
      got += n;
      onBytes?.(n);
      if (filled + n === buffer.length) await slices.full();
    }
  }
  return got;
}

async function copyStream(stream: Readable, target: Buffer, offset: number, onBytes?: (n: number) => void): Promise<number> {
  let position = offset;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (position + chunk.length > target.length) throw new Error("response body longer than the requested range");
    chunk.copy(target, position);
    position += chunk.length;
    onBytes?.(chunk.length);
  }
  return position - offset;
}


export async function putObject(client: S3Client, ref: ObjectRef, body: Buffer, attrs: ObjectAttributes, call: Call & ChecksumCall = {}): Promise<string> {
  if (canSendDirectly(client, ref.bucket)) {
    // The headers the SDK writes for this input (s3/direct.ts); the ETag (and any echoed checksum) is all s3x reads back.
    const headers = attributeHeaders(attrs);
    addChecksumHeader(headers, call.checksum);
    const response = await directPut(client, ref.bucket, ref.key, headers, body, call.signal);
    const etag = (await etagOfDirectPut(response)) ?? "";
    call.echoed?.(echoedChecksum(response.headers));
    return etag;
  }
  const out = await send(client, new PutObjectCommand({
      Bucket: ref.bucket,
      Key: ref.key,
      Body: body,
      ContentLength: body.length,
      ...attributeInput(attrs),
      ...checksumInput(call.checksum),
    }), call.signal);
  call.echoed?.(checksumOutput(out).checksum);
  return out.ETag ?? "";
}

export interface MultipartChecksum {
  algorithm: ChecksumAlgorithm;
  type: ChecksumType;
}

export async function createMultipartUpload(client: S3Client, ref: ObjectRef, attrs: ObjectAttributes, call: Call & { checksum?: MultipartChecksum } = {}): Promise<string> {
  const out = await send(client, new CreateMultipartUploadCommand({
      Bucket: ref.bucket,
      Key: ref.key,
      ...attributeInput(attrs),
      ChecksumAlgorithm: call.checksum?.algorithm,
      ChecksumType: call.checksum?.type,
    }), call.signal);
  if (!out.UploadId) throw new Error("CreateMultipartUpload returned no UploadId");
  return out.UploadId;
}

export interface CompletedPart {
  partNumber: number;
  etag: string;
  checksum?: ChecksumValue;
}

export async function uploadPart(client: S3Client, ref: ObjectRef, uploadId: string, partNumber: number, body: Buffer, call: Call & ChecksumCall = {}): Promise<string> {
  if (canSendDirectly(client, ref.bucket)) {
    // As the SDK sends it (s3/direct.ts), without its per-request work.
    const headers: Record<string, string> = { "content-type": "application/octet-stream" };
    addChecksumHeader(headers, call.checksum);
    const response = await directUploadPart(client, ref.bucket, ref.key, uploadId, partNumber, headers, body, call.signal);
    const etag = await etagOfDirectPut(response);
    if (!etag) throw new Error(`UploadPart ${partNumber} returned no ETag`);
    call.echoed?.(echoedChecksum(response.headers));
    return etag;
  }
  const out = await send(client, new UploadPartCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: uploadId, PartNumber: partNumber, Body: body, ContentLength: body.length, ...checksumInput(call.checksum) }), call.signal);
  if (!out.ETag) throw new Error(`UploadPart ${partNumber} returned no ETag`);
  call.echoed?.(checksumOutput(out).checksum);
  return out.ETag;
}

export async function completeMultipartUpload(
  client: S3Client,
  ref: ObjectRef,
  uploadId: string,
  parts: CompletedPart[],
  call: Call & { fullObjectChecksum?: ChecksumValue; checksumType?: ChecksumType } = {},
): Promise<void> {
  const sorted = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  // The SDK turns an error document inside a 200 response into a thrown error.
  await send(client, new CompleteMultipartUploadCommand({
      Bucket: ref.bucket,
      Key: ref.key,
      UploadId: uploadId,
      MultipartUpload: { Parts: sorted.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag, ...checksumInput(p.checksum) })) },
      // S3 checks a FULL_OBJECT value against the parts it stored and refuses the upload on a mismatch.
      ...checksumInput(call.fullObjectChecksum),
      ChecksumType: call.checksumType,
    }), call.signal);
}

/** A part S3 already stores for an upload in progress. */
export interface StoredPart {
  partNumber: number;
  size: number;
  etag: string;
  checksum?: ChecksumValue;
}

/** Every part stored so far for `uploadId` (all pages of ListParts). */
export async function listParts(client: S3Client, ref: ObjectRef, uploadId: string, call: Call = {}): Promise<StoredPart[]> {
  const parts: StoredPart[] = [];
  let marker: string | undefined;
  for (;;) {
    const out = await send(client, new ListPartsCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: uploadId, PartNumberMarker: marker }), call.signal);
    for (const p of out.Parts ?? []) {
      parts.push({ partNumber: p.PartNumber ?? 0, size: p.Size ?? 0, etag: p.ETag ?? "", ...checksumOutput(p) });
    }
    if (!out.IsTruncated || !out.NextPartNumberMarker) return parts;
    marker = out.NextPartNumberMarker;
  }
}

export async function abortMultipartUpload(client: S3Client, ref: ObjectRef, uploadId: string): Promise<void> {
  await send(client, new AbortMultipartUploadCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: uploadId }));
}

/** `bucket/key` URL-encoded for x-amz-copy-source, keeping the slashes. */
function copySource(ref: ObjectRef): string {
  return `${ref.bucket}/${ref.key.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * CopyObject. With `attrs` the copy gets those attributes (metadata
 * directive REPLACE); without, the source's (COPY), and `storage` alone.
 */
export async function copyObject(
  client: S3Client,
  source: ObjectRef,
  dest: ObjectRef,
  attrs: ObjectAttributes | undefined,
  sourceEtag: string | undefined,
  call: Call & { storage?: StorageSettings } = {},
): Promise<void> {
  const written: ObjectAttributes = attrs ?? call.storage ?? {};
  if (canSendDirectly(client, dest.bucket)) {
    // The headers the SDK writes for the input below (s3/direct.ts).
    const headers = attributeHeaders(written);
    headers["x-amz-copy-source"] = copySource(source);
    headers["x-amz-metadata-directive"] = attrs ? "REPLACE" : "COPY";
    if (sourceEtag) headers["x-amz-copy-source-if-match"] = sourceEtag;
    return directCopy(client, dest.bucket, dest.key, headers, call.signal);
  }
  await send(client, new CopyObjectCommand({
      Bucket: dest.bucket,
      Key: dest.key,
      CopySource: copySource(source),
      CopySourceIfMatch: sourceEtag || undefined,
      // Keep the source's metadata unless the user gave new attributes.
      MetadataDirective: attrs ? "REPLACE" : "COPY",
      ...attributeInput(written),
    }), call.signal);
}

export async function uploadPartCopy(
  client: S3Client,
  source: ObjectRef,
  dest: ObjectRef,
  uploadId: string,
  partNumber: number,
  range: { start: number; end: number },
  sourceEtag: string,
  call: Call = {},
): Promise<string> {
  const out = await send(client, new UploadPartCopyCommand({
      Bucket: dest.bucket,
      Key: dest.key,
      UploadId: uploadId,
      PartNumber: partNumber,
      CopySource: copySource(source),
      CopySourceRange: `bytes=${range.start}-${range.end}`,
      CopySourceIfMatch: sourceEtag || undefined,
    }), call.signal);
  const etag = out.CopyPartResult?.ETag;
  if (!etag) throw new Error(`UploadPartCopy ${partNumber} returned no ETag`);
  return etag;
}
