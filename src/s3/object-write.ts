import { attributeHeaders, type ObjectAttributes } from "./attributes.js";
import type { Call, ObjectRef } from "./object-ref.js";
import { addChecksumHeader, checksumFrom, checksumFromHeaders, type ChecksumCall, type ChecksumType, type ChecksumValue, type MultipartChecksum } from "./checksum-fields.js";
import { drain, textOf, type S3Requester } from "./request.js";
import { childBoolean, childNumber, childText, children, escapeXml, xmlRoot } from "./xml.js";
import { failureInOk } from "./errors.js";

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
      const { checksum } = checksumFrom((algorithm) => childText(p, `Checksum${algorithm}`));
      parts.push({ partNumber: childNumber(p, "PartNumber") ?? 0, size: childNumber(p, "Size") ?? 0, etag: childText(p, "ETag") ?? "", ...(checksum ? { checksum } : {}) });
    }
    const next = childText(result, "NextPartNumberMarker");
    if (!childBoolean(result, "IsTruncated") || !next) return parts;
    marker = next;
  }
}

export async function abortMultipartUpload(s3: S3Requester, ref: ObjectRef, uploadId: string, call: Call = {}): Promise<void> {
  await drain(await s3.send({ operation: "AbortMultipartUpload", method: "DELETE", bucket: ref.bucket, key: ref.key, query: { uploadId } }, call));
}

/** Whether the request carries a checksum the server is known to verify (then --payload-signing auto skips the SHA-256). */
function checkedChecksum(call: ChecksumCall): boolean {
  return call.checksum !== undefined && call.checksumChecked === true;
}
