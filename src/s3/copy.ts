import { CopyObjectCommand, UploadPartCopyCommand, type S3Client } from "./sdk.js";
import { attributeHeaders, attributeInput, type ObjectAttributes, type StorageSettings } from "./attributes.js";
import type { Call, ObjectRef } from "./object-ref.js";
import { canSendDirectly } from "./bucket-routes.js";
import { directCopy, send } from "./request.js";

/** Server-side copies: CopyObject, and UploadPartCopy for copies made in parts. */

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
    // The headers the SDK writes for the input below (s3/request.ts).
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
