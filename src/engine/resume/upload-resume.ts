import { createHash } from "node:crypto";
import { headObject, listParts, type ChecksumAlgorithm, type CompletedPart, type ChecksumValue, type ObjectAttributes, type ObjectRef, type StoredPart } from "../../s3/operations.js";
import type { TransferContext } from "../context.js";
import { RequestError, withRetries } from "../retry.js";
import { recordMatchesRequest, recordMatchesSource, removeUploadRecord, type StoredRecord, type UploadRecord } from "./upload-journal.js";
import { abortQuietly, multipartEtag } from "../multipart-commit.js";
import { s3Url } from "../object-url.js";

/** Where an interrupted upload continues: its ID and the parts S3 already holds. */
export interface ResumePoint {
  uploadId: string;
  /** The local record of the upload (s3x started it on this machine). */
  recordFile: string;
  stored: Map<number, StoredPart>;
  /** The checksum the upload was created with (its parts must all carry it). */
  checksum?: ChecksumAlgorithm;
  /** The upload's part size: the rest of the file is cut the same way, whatever --part-size says now. */
  partSize: number;
}

/**
 * Finds the upload to continue: s3x's own record of an upload of this very
 * file (path, size, mtime unchanged) that was created with the attributes
 * and checksum this command asks for, and that S3 still has. Its stored parts
 * are still compared with the file (`partMatches`) before they are reused.
 *
 * Uploads found only in ListMultipartUploads are never adopted, even when
 * their parts would fit: S3 shows neither an upload's metadata nor its
 * source, so such an upload may be another client's (adopting it would race
 * that client and give the object its Content-Type and metadata, not the
 * ones asked for now). Without a local record, a new upload is started.
 *
 * A record whose upload S3 no longer has may be of an upload completed just
 * before the run was killed: when the object there is the one this file's
 * parts make (its multipart ETag), the upload is done ("completed").
 *
 * Records of this destination whose file has changed since, or whose
 * attributes differ from this command's, are obsolete: their uploads are
 * aborted (the caller holds the destination's lock, so no other s3x is using them).
 */
export async function findResumePoint(
  ctx: TransferContext,
  dest: ObjectRef,
  records: StoredRecord[],
  source: UploadRecord["source"],
  wanted: { attributes: ObjectAttributes; checksum?: ChecksumAlgorithm | "any" },
  fileParts: (partSize: number) => Promise<CompletedPart[]>,
): Promise<ResumePoint | "completed" | undefined> {
  for (const { file, record } of records) {
    if (!recordMatchesSource(record, source)) {
      ctx.notify(`the interrupted upload ${record.uploadId} of ${s3Url(dest)} was of a different version of ${source.path}: aborting it`);
      await abandon(ctx, dest, record.uploadId, file);
      continue;
    }
    const stored = await storedParts(ctx, dest, record.uploadId);
    if (!stored) {
      await removeUploadRecord(file); // completed or aborted elsewhere
      if (await completedEarlier(ctx, dest, record, fileParts)) {
        ctx.notify(`the upload ${record.uploadId} of ${s3Url(dest)} was completed before the interruption (the object there has the ETag this file's parts make): nothing to send`);
        return "completed";
      }
      continue;
    }
    if (!recordMatchesRequest(record, wanted)) {
      ctx.notify(
        `the interrupted upload ${record.uploadId} of ${s3Url(dest)} was started with other attributes (content type, metadata, storage class or checksum): ` +
          `aborting it and starting a new upload with the ones given now`,
      );
      await abandon(ctx, dest, record.uploadId, file);
      return undefined;
    }
    announce(ctx, dest, record.uploadId, stored);
    return { uploadId: record.uploadId, recordFile: file, stored, checksum: record.checksum, partSize: record.partSize };
  }
  ctx.notify(`no interrupted upload of ${s3Url(dest)} to resume: starting a new one`);
  return undefined;
}

/**
 * Whether the object at `dest` is what this record's upload made: its size
 * the file's and its ETag the one the file's parts (cut as the record says)
 * make. The HEAD comes first; the file is read only when its answer could match.
 */
async function completedEarlier(ctx: TransferContext, dest: ObjectRef, record: UploadRecord, fileParts: (partSize: number) => Promise<CompletedPart[]>): Promise<boolean> {
  const info = await withRetries(`HEAD ${s3Url(dest)}`, ctx.retry, (_n, routing) => {
    ctx.stats.requests++;
    return headObject(ctx.s3, dest, { signal: ctx.signal, routing });
  }, { signal: ctx.signal }).catch(() => undefined);
  const found = info?.etag.replace(/"/g, "");
  if (!info || !found || info.size !== record.source.size) return false;
  if (found.split("-")[1] !== String(Math.ceil(record.source.size / record.partSize))) return false;
  return multipartEtag(await fileParts(record.partSize)) === found;
}

/** Aborts an upload s3x will not continue and forgets its record. */
async function abandon(ctx: TransferContext, dest: ObjectRef, uploadId: string, file: string): Promise<void> {
  await abortQuietly(ctx, dest, uploadId);
  await removeUploadRecord(file);
}

/**
 * The records whose uploads S3 still has; records of uploads that are gone
 * (completed just before a kill -9 could remove the record, or aborted
 * elsewhere) are removed, so they are never reported as interrupted.
 */
export async function liveRecords(ctx: TransferContext, dest: ObjectRef, records: StoredRecord[]): Promise<StoredRecord[]> {
  const live: StoredRecord[] = [];
  for (const stored of records) {
    if (await storedParts(ctx, dest, stored.record.uploadId)) live.push(stored);
    else await removeUploadRecord(stored.file);
  }
  return live;
}

function announce(ctx: TransferContext, dest: ObjectRef, uploadId: string, stored: Map<number, StoredPart>): void {
  let bytes = 0;
  for (const p of stored.values()) bytes += p.size;
  ctx.notify(`resuming upload ${uploadId} of ${s3Url(dest)}: ${stored.size} parts (${bytes} bytes) already stored, checking them against the file`);
}

/** The parts of an upload, or undefined when S3 no longer has the upload. */
async function storedParts(ctx: TransferContext, dest: ObjectRef, uploadId: string): Promise<Map<number, StoredPart> | undefined> {
  try {
    const parts = await withRetries(`ListParts ${s3Url(dest)}`, ctx.retry, (_n, routing) => {
      ctx.stats.requests++;
      return listParts(ctx.s3, dest, uploadId, { signal: ctx.signal, routing });
    }, { signal: ctx.signal });
    return new Map(parts.map((p) => [p.partNumber, p]));
  } catch (err) {
    if (err instanceof RequestError && (err.failure.code === "NoSuchUpload" || err.failure.status === 404)) return undefined;
    throw err;
  }
}

/**
 * Whether a stored part holds exactly these bytes: by its checksum when S3
 * kept one of our algorithm (cheap, already computed), else by its ETag,
 * which for a plain (non-KMS) upload part is the MD5 of its bytes.
 */
export function partMatches(stored: StoredPart, body: Buffer, checksum: ChecksumValue | undefined): boolean {
  if (stored.size !== body.length) return false;
  if (checksum && stored.checksum?.algorithm === checksum.algorithm) return stored.checksum.base64 === checksum.base64;
  const etag = stored.etag.replace(/"/g, "");
  if (!/^[0-9a-f]{32}$/i.test(etag)) return false; // not an MD5: cannot verify, so send the part again
  return createHash("md5").update(body).digest("hex") === etag.toLowerCase();
}
