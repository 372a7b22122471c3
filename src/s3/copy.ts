import { attributeHeaders, type ObjectAttributes, type StorageSettings } from "./attributes.js";
import type { Call, ObjectRef } from "./object-ref.js";
import { textOf, type S3Requester } from "./request.js";
import { failureInOk } from "./errors.js";
import { childText, xmlRoot } from "./xml.js";
import { encodeKey } from "./route.js";

/** Server-side copies: CopyObject, and UploadPartCopy for copies made in parts. */

/** `bucket/key` URL-encoded for x-amz-copy-source, keeping the slashes. */
function copySource(ref: ObjectRef): string {
  return `${ref.bucket}/${encodeKey(ref.key)}`;
}

/**
 * CopyObject. With `attrs` the copy gets those attributes (metadata
 * directive REPLACE); without, the source's (COPY), and `storage` alone.
 * Resolves once the copy is done: S3 may still fail it after answering
 * 200, in the body (failureInOk).
 */
export async function copyObject(
  s3: S3Requester,
  source: ObjectRef,
  dest: ObjectRef,
  attrs: ObjectAttributes | undefined,
  sourceEtag: string | undefined,
  call: Call & { storage?: StorageSettings } = {},
): Promise<void> {
  const headers = attributeHeaders(attrs ?? call.storage ?? {});
  headers["x-amz-copy-source"] = copySource(source);
  // Keep the source's metadata unless the user gave new attributes.
  headers["x-amz-metadata-directive"] = attrs ? "REPLACE" : "COPY";
  if (sourceEtag) headers["x-amz-copy-source-if-match"] = sourceEtag;
  const response = await s3.send({ operation: "CopyObject", method: "PUT", bucket: dest.bucket, key: dest.key, headers, body: NO_BODY, kind: "copy" }, call);
  const failure = failureInOk(response, await textOf(response), "CopyObject", true);
  if (failure) throw failure;
}

/** What a copy sends as payload: nothing, with Content-Length 0. */
const NO_BODY = Buffer.alloc(0);

export async function uploadPartCopy(
  s3: S3Requester,
  source: ObjectRef,
  dest: ObjectRef,
  uploadId: string,
  partNumber: number,
  range: { start: number; end: number },
  sourceEtag: string,
  call: Call = {},
): Promise<string> {
  const headers: Record<string, string> = { "x-amz-copy-source": copySource(source), "x-amz-copy-source-range": `bytes=${range.start}-${range.end}` };
  if (sourceEtag) headers["x-amz-copy-source-if-match"] = sourceEtag;
  const query = { partNumber: String(partNumber), uploadId };
  const response = await s3.send({ operation: "UploadPartCopy", method: "PUT", bucket: dest.bucket, key: dest.key, query, headers, body: NO_BODY, kind: "copy" }, call);
  const text = await textOf(response);
  const failure = failureInOk(response, text, "UploadPartCopy", true);
  if (failure) throw failure;
  const etag = childText(xmlRoot(text, "CopyPartResult"), "ETag");
  if (!etag) throw new Error(`UploadPartCopy ${partNumber} returned no ETag`);
  return etag;
}
