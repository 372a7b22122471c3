import { attributeHeaders, type ObjectAttributes } from "./attributes.js";
import type { Call, ObjectRef } from "./object-ref.js";
import { addChecksumHeader, checksumFromHeaders, type ChecksumCall, type ChecksumType, type ChecksumValue, type MultipartChecksum } from "./checksum-fields.js";
import { drain, textOf, type S3Requester, type S3Response } from "./request.js";
import { childBoolean, childNumber, childText, children, escapeXml, xmlRoot } from "./xml.js";
import { errorFromText } from "./errors.js";

/** Object writes: PutObject and the multipart upload calls (create, part, complete, list, abort). */

export async function putObject(s3: S3Requester, ref: ObjectRef, body: Buffer, attrs: ObjectAttributes, call: Call & ChecksumCall = {}): Promise<string> {
  const headers = attributeHeaders(attrs);
  addChecksumHeader(headers, call.checksum);
  const response = await s3.send({ operation: "PutObject", method: "PUT", bucket: ref.bucket, key: ref.key, headers, body, payload: "data", kind: "write", checksumChecked: checkedChecksum(call) }, call);
  await drain(response);
  call.echoed?.(checksumFromHeaders(response.headers).checksum);
  return response.headers.etag ?? "";
}

export async function createMultipartUpload(s3: S3Requester, ref: ObjectRef, attrs: ObjectAttributes, call: Call & { checksum?: MultipartChecksum } = {}): Promise<string> {
  const headers = attributeHeaders(attrs);
  if (call.checksum) {
    headers["x-amz-checksum-algorithm"] = call.checksum.algorithm;
    headers["x-amz-checksum-type"] = call.checksum.type;
  }
  const response = await s3.send({ operation: "CreateMultipartUpload", method: "POST", bucket: ref.bucket, key: ref.key, query: { uploads: "" }, headers, kind: "write" }, call);
  const uploadId = childText(xmlRoot(await textOf(response), "InitiateMultipartUploadResult"), "UploadId");
  if (!uploadId) throw new Error("CreateMultipartUpload returned no UploadId");
  return uploadId;
}

export interface CompletedPart {
  partNumber: number;
  etag: string;
  checksum?: ChecksumValue;
}

export async function uploadPart(s3: S3Requester, ref: ObjectRef, uploadId: string, partNumber: number, body: Buffer, call: Call & ChecksumCall = {}): Promise<string> {
  const headers: Record<string, string> = { "content-type": "application/octet-stream" };
  addChecksumHeader(headers, call.checksum);
  const query = { partNumber: String(partNumber), uploadId };
  const response = await s3.send({ operation: "UploadPart", method: "PUT", bucket: ref.bucket, key: ref.key, query, headers, body, payload: "data", kind: "write", checksumChecked: checkedChecksum(call) }, call);
  await drain(response);
  const etag = response.headers.etag;
  if (!etag) throw new Error(`UploadPart ${partNumber} returned no ETag`);
  call.echoed?.(checksumFromHeaders(response.headers).checksum);
  return etag;
}

export async function completeMultipartUpload(
  s3: S3Requester,
  ref: ObjectRef,
  uploadId: string,
  parts: CompletedPart[],
  call: Call & { fullObjectChecksum?: ChecksumValue; checksumType?: ChecksumType } = {},
): Promise<void> {
  const sorted = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  const body = Buffer.from(completeDocument(sorted), "utf8");
  const headers: Record<string, string> = { "content-type": "application/xml" };
  // S3 checks a FULL_OBJECT value against the parts it stored and refuses the upload on a mismatch.
  addChecksumHeader(headers, call.fullObjectChecksum);
  if (call.checksumType) headers["x-amz-checksum-type"] = call.checksumType;
  const response = await s3.send({ operation: "CompleteMultipartUpload", method: "POST", bucket: ref.bucket, key: ref.key, query: { uploadId }, headers, body, payload: "document" }, call);
  const failure = failureInOk(response, await textOf(response), "CompleteMultipartUpload");
  if (failure) throw failure;
}

/** The CompleteMultipartUpload document: every part's number, ETag and checksum. */
export function completeDocument(parts: CompletedPart[]): string {
  const items = parts.map((p) => {
    const checksum = p.checksum ? `<Checksum${p.checksum.algorithm}>${escapeXml(p.checksum.base64)}</Checksum${p.checksum.algorithm}>` : "";
    // In the SDK's order, which every server we know has taken.
    return `<Part><ETag>${escapeXml(p.etag)}</ETag>${checksum}<PartNumber>${p.partNumber}</PartNumber></Part>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${items.join("")}</CompleteMultipartUpload>`;
}

/** The codes a server's failure inside a 200 carries that are transient: those become a 503, retried. */
const UNAVAILABLE_CODES = new Set(["SlowDown", "ServiceUnavailable", "InternalError", "Throttling", "ThrottlingException", "RequestTimeout"]);

/**
 * The error a 200 answer stands for, if any. S3 sends the 200 status of a
 * CompleteMultipartUpload or a copy before the work is done, so one that
 * fails late answers 200 with an <Error> document, or (a copy) with nothing
 * if the connection was cut. A transient code (or nothing) is a server failure,
 * status 503, retried; any other (InvalidPart, NoSuchUpload, EntityTooSmall…)
 * is the server's final word and keeps the 200 it came with.
 */
export function failureInOk(response: Pick<S3Response, "headers">, text: string, operation: string, emptyIsFailure = false): Error | undefined {
  if (text.length === 0 && emptyIsFailure) return errorFromText(503, response.headers, "<Error><Code>InternalError</Code><Message>the request ended without an answer</Message></Error>", operation);
  if (!text.trimEnd().endsWith("</Error>")) return undefined;
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
  return errorFromText(code === undefined || UNAVAILABLE_CODES.has(code) ? 503 : 200, response.headers, text, operation);
}

/** A part S3 already stores for an upload in progress. */
export interface StoredPart {
  partNumber: number;
  size: number;
  etag: string;
  checksum?: ChecksumValue;
}

/** Every part stored so far for `uploadId` (all pages of ListParts). */
export async function listParts(s3: S3Requester, ref: ObjectRef, uploadId: string, call: Call = {}): Promise<StoredPart[]> {
  const parts: StoredPart[] = [];
  let marker: string | undefined;
  for (;;) {
    const query: Record<string, string> = { uploadId };
    if (marker !== undefined) query["part-number-marker"] = marker;
    const response = await s3.send({ operation: "ListParts", method: "GET", bucket: ref.bucket, key: ref.key, query }, call);
    const result = xmlRoot(await textOf(response), "ListPartsResult");
    if (!result) throw new Error("ListParts answered with a document that is not a ListPartsResult");
    for (const p of children(result, "Part")) {
      parts.push({ partNumber: childNumber(p, "PartNumber") ?? 0, size: childNumber(p, "Size") ?? 0, etag: childText(p, "ETag") ?? "", ...checksumOfElement(p) });
    }
    const next = childText(result, "NextPartNumberMarker");
    if (!childBoolean(result, "IsTruncated") || !next) return parts;
    marker = next;
  }
}

export async function abortMultipartUpload(s3: S3Requester, ref: ObjectRef, uploadId: string, call: Call = {}): Promise<void> {
  await drain(await s3.send({ operation: "AbortMultipartUpload", method: "DELETE", bucket: ref.bucket, key: ref.key, query: { uploadId } }, call));
}

/** The checksum an XML element (a Part) carries, if any. */
function checksumOfElement(element: Parameters<typeof childText>[0]): { checksum?: ChecksumValue } {
  for (const algorithm of ["CRC32", "CRC32C", "CRC64NVME", "SHA256"] as const) {
    const base64 = childText(element, `Checksum${algorithm}`);
    if (base64) return { checksum: { algorithm, base64 } };
  }
  return {};
}

/** Whether the request carries a checksum the server is known to verify (then --payload-signing auto skips the SHA-256). */
function checkedChecksum(call: ChecksumCall): boolean {
  return call.checksum !== undefined && call.checksumChecked === true;
}
