import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from "./sdk.js";
import { attributeHeaders, attributeInput, type ObjectAttributes } from "./attributes.js";
import type { Call, ObjectRef } from "./object-ref.js";
import {
  addChecksumHeader,
  checksumFromHeaders,
  checksumInput,
  checksumOutput,
  type ChecksumCall,
  type ChecksumType,
  type ChecksumValue,
  type MultipartChecksum,
} from "./checksum-fields.js";
import { canSendDirectly } from "./bucket-routes.js";
import { directPut, directUploadPart, errorOf, send, type DirectResponse } from "./request.js";
import { markChecksumChecked } from "./payload-signing.js";

/** Object writes: PutObject and the multipart upload calls (create, part, complete, list, abort). */

export async function putObject(client: S3Client, ref: ObjectRef, body: Buffer, attrs: ObjectAttributes, call: Call & ChecksumCall = {}): Promise<string> {
  if (canSendDirectly(client, ref.bucket)) {
    // The headers the SDK writes for this input (s3/request.ts); the ETag (and any echoed checksum) is all s3x reads back.
    const headers = attributeHeaders(attrs);
    addChecksumHeader(headers, call.checksum);
    const response = await directPut(client, ref.bucket, ref.key, headers, body, call.signal, checkedChecksum(call));
    const etag = (await etagOfDirectPut(response)) ?? "";
    call.echoed?.(checksumFromHeaders(response.headers).checksum);
    return etag;
  }
  const command = new PutObjectCommand({
    Bucket: ref.bucket,
    Key: ref.key,
    Body: body,
    ContentLength: body.length,
    ...attributeInput(attrs),
    ...checksumInput(call.checksum),
  });
  if (checkedChecksum(call)) markChecksumChecked(command.input);
  const out = await send(client, command, call.signal);
  call.echoed?.(checksumOutput(out).checksum);
  return out.ETag ?? "";
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
    // As the SDK sends it (s3/request.ts), without its per-request work.
    const headers: Record<string, string> = { "content-type": "application/octet-stream" };
    addChecksumHeader(headers, call.checksum);
    const response = await directUploadPart(client, ref.bucket, ref.key, uploadId, partNumber, headers, body, call.signal, checkedChecksum(call));
    const etag = await etagOfDirectPut(response);
    if (!etag) throw new Error(`UploadPart ${partNumber} returned no ETag`);
    call.echoed?.(checksumFromHeaders(response.headers).checksum);
    return etag;
  }
  const command = new UploadPartCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: uploadId, PartNumber: partNumber, Body: body, ContentLength: body.length, ...checksumInput(call.checksum) });
  if (checkedChecksum(call)) markChecksumChecked(command.input);
  const out = await send(client, command, call.signal);
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
    }), call.signal).catch((err: unknown) => {
    throw answeredInOk(err);
  });
}

/** The codes a server's 503 carries: those stay server failures, retried. */
const UNAVAILABLE_CODES = new Set(["SlowDown", "ServiceUnavailable", "InternalError", "Throttling", "ThrottlingException", "RequestTimeout"]);

/**
 * The SDK gives an <Error> document that arrived inside a 200 the status
 * 503, so every such error would be retried and reported as "HTTP 503".
 * Only the transient codes are a server's 503; any other (InvalidPart,
 * InvalidPartOrder, NoSuchUpload, EntityTooSmall…) is the server's final
 * word on this Complete: it gets back the status it came with.
 */
function answeredInOk(err: unknown): unknown {
  const e = err as { Code?: string; name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  const code = e?.Code ?? e?.name;
  if (e?.$metadata?.httpStatusCode === 503 && code && /^[A-Z][A-Za-z]+$/.test(code) && !UNAVAILABLE_CODES.has(code) && code !== "Unknown" && code !== "UnknownError") {
    e.$metadata.httpStatusCode = 200;
  }
  return err;
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

/** The ETag a direct PUT got back, its body read to the end; an error answer is thrown as the SDK would. */
async function etagOfDirectPut(response: DirectResponse): Promise<string | undefined> {
  if (response.statusCode !== 200) throw await errorOf(response);
  await drain(response.body);
  return response.headers.etag;
}

/** Whether the request carries a checksum the server is known to verify (then --payload-signing auto skips the SHA-256). */
function checkedChecksum(call: ChecksumCall): boolean {
  return call.checksum !== undefined && call.checksumChecked === true;
}

/** Reads a response body to its end (frees the connection for the next request). */
async function drain(body: unknown): Promise<void> {
  if (body && typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") for await (const _ of body as AsyncIterable<unknown>);
}
