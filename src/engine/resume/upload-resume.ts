import { createHash } from "node:crypto";
import { partAt, planParts, MIN_PART_SIZE, type PartPlan } from "../../plan/parts.js";
import { listUploadsPage } from "../../s3/list.js";
import { abortMultipartUpload, listParts, type ChecksumAlgorithm, type ChecksumValue, type ObjectRef, type StoredPart } from "../../s3/operations.js";
import type { TransferContext } from "../context.js";
import { RequestError, withRetries } from "../retry.js";
import { recordMatchesSource, removeUploadRecord, type StoredRecord, type UploadRecord } from "./upload-journal.js";

/** Where an interrupted upload continues: its ID and the parts S3 already holds. */
export interface ResumePoint {
  uploadId: string;
  /** The local record of the upload, when s3x started it on this machine. */
  recordFile?: string;
  stored: Map<number, StoredPart>;
  /** The checksum the upload was created with (its parts must all carry it). */
  checksum?: ChecksumAlgorithm;
  /** The upload's part size: the rest of the file is cut the same way, whatever --part-size says now. */
  partSize: number;
}

function describe(ref: ObjectRef): string {
  return `s3://${ref.bucket}/${ref.key}`;
}

/**
 * Finds the upload to continue, in order of trust:
 * 1. s3x's own record of an upload of this very file (path, size, mtime,
 *    part size all unchanged) whose upload S3 still has;
 * 2. otherwise any upload in progress for the key whose stored parts fit this
 *    file's part plan (an upload begun on another machine, or whose record is
 *    gone) — the newest first.
 * Stored parts are only trusted after `partMatches` compared them with the
 * file, so a wrong guess costs a re-upload, never a wrong object. Records of
 * this destination whose file has changed since are obsolete: their uploads
 * are aborted.
 */
export async function findResumePoint(
  ctx: TransferContext,
  dest: ObjectRef,
  records: StoredRecord[],
  source: UploadRecord["source"],
  plan: PartPlan,
): Promise<ResumePoint | undefined> {
  for (const { file, record } of records) {
    if (!recordMatchesSource(record, source)) {
      ctx.notify(`the interrupted upload ${record.uploadId} of ${describe(dest)} was of a different version of ${source.path}: aborting it`);
      await withRetries(`AbortMultipartUpload ${describe(dest)}`, { ...ctx.retry, maxAttempts: 3 }, () => abortMultipartUpload(ctx.client, dest, record.uploadId)).catch(() => undefined);
      await removeUploadRecord(file);
      continue;
    }
    const stored = await storedParts(ctx, dest, record.uploadId);
    if (!stored) {
      await removeUploadRecord(file); // completed or aborted elsewhere
      continue;
    }
    announce(ctx, dest, record.uploadId, stored);
    return { uploadId: record.uploadId, recordFile: file, stored, checksum: record.checksum, partSize: record.partSize };
  }
  for (const candidate of await uploadsForKey(ctx, dest)) {
    const stored = await storedParts(ctx, dest, candidate.uploadId);
    if (!stored || stored.size === 0) continue;
    // Part 1, when stored and not the last, shows the part size the upload was cut with.
    const first = stored.get(1);
    const partSize = first && first.size >= MIN_PART_SIZE && first.size < plan.objectSize ? first.size : plan.partSize;
    if (!fitsPlan(stored, planParts(plan.objectSize, partSize))) continue;
    announce(ctx, dest, candidate.uploadId, stored);
    const somePart = stored.values().next().value as StoredPart;
    return { uploadId: candidate.uploadId, stored, checksum: somePart.checksum?.algorithm, partSize };
  }
  ctx.notify(`no interrupted upload of ${describe(dest)} to resume: starting a new one`);
  return undefined;
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
  ctx.notify(`resuming upload ${uploadId} of ${describe(dest)}: ${stored.size} parts (${bytes} bytes) already stored, checking them against the file`);
}

/** The parts of an upload, or undefined when S3 no longer has the upload. */
async function storedParts(ctx: TransferContext, dest: ObjectRef, uploadId: string): Promise<Map<number, StoredPart> | undefined> {
  try {
    const parts = await withRetries(`ListParts ${describe(dest)}`, ctx.retry, () => {
      ctx.stats.requests++;
      return listParts(ctx.client, dest, uploadId, { signal: ctx.signal });
    }, { signal: ctx.signal });
    return new Map(parts.map((p) => [p.partNumber, p]));
  } catch (err) {
    if (err instanceof RequestError && (err.failure.code === "NoSuchUpload" || err.failure.status === 404)) return undefined;
    throw err;
  }
}

/** In-progress uploads of exactly this key, newest first. */
async function uploadsForKey(ctx: TransferContext, dest: ObjectRef): Promise<{ uploadId: string; initiated?: Date }[]> {
  const found: { uploadId: string; initiated?: Date }[] = [];
  let marker: { key?: string; uploadId?: string } | undefined = {};
  while (marker) {
    const from: { key?: string; uploadId?: string } = marker;
    const page = await withRetries(`ListMultipartUploads ${describe(dest)}`, ctx.retry, () => {
      ctx.stats.requests++;
      return listUploadsPage(ctx.client, dest.bucket, dest.key, from, ctx.signal);
    }, { signal: ctx.signal });
    for (const u of page.uploads) if (u.key === dest.key) found.push(u);
    marker = page.next;
  }
  return found.sort((a, b) => (b.initiated?.getTime() ?? 0) - (a.initiated?.getTime() ?? 0));
}

/** Every stored part sits where this file's plan puts a part of the same size. */
function fitsPlan(stored: Map<number, StoredPart>, plan: PartPlan): boolean {
  for (const part of stored.values()) {
    if (part.partNumber < 1 || part.partNumber > plan.count) return false;
    if (part.size !== partAt(plan, part.partNumber - 1).length) return false;
  }
  return true;
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
