import { open, type FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import { partAt, planParts, streamPartSize, type PartPlan, uploadPartSize, DEFAULT_PART_SIZE, MAX_PARTS } from "../plan/parts.js";
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  putObject,
  uploadPart,
  type ChecksumAlgorithm,
  type ChecksumValue,
  type CompletedPart,
  type ObjectAttributes,
  type ObjectRef,
} from "../s3/operations.js";
import { acquirePartBuffer, childController, queued, retryHooks, type TransferContext } from "./context.js";
import { checksumValue, digestOf, fullObjectDigest, isCrc, type RangeDigest } from "./integrity/checksums.js";
import { isInterruption } from "./resume/interruption.js";
import { findResumePoint, liveRecords, partMatches, type ResumePoint } from "./resume/upload-resume.js";
import { findUploadRecords, forgetUpload, removeUploadRecord, saveUploadRecord, type UploadRecord } from "./resume/upload-journal.js";
import { withRetries } from "./retry.js";
import { repeatHedge } from "./hedge.js";
import type { ChunkSource } from "./sources/chunk-source.js";
import { TaskGroup } from "./task-group.js";

export interface UploadOptions {
  /** Objects up to this size go in one PutObject. */
  multipartThreshold: number;
  /** Requested part size; raised automatically to stay within 10,000 parts. */
  partSize?: number;
  attributes: ObjectAttributes;
  /** Leave a failed multipart upload in place (for inspection) instead of aborting it. */
  keepFailedUpload: boolean;
  /** Additional checksum sent with every part and (for CRCs) the whole object; undefined: none. */
  checksum?: ChecksumAlgorithm;
  /**
   * File uploads are resumable: `endpoint` names the S3 endpoint in the local
   * upload records; with `resume`, an interrupted upload of the same file is
   * continued instead of started over.
   */
  resumable?: { endpoint: string; resume: boolean };
}

export interface UploadResult {
  size: number;
  parts: number;
}

function describe(ref: ObjectRef): string {
  return `s3://${ref.bucket}/${ref.key}`;
}

/** Uploads a regular file: parts are read at their offsets and sent concurrently. */
export async function uploadFile(ctx: TransferContext, path: string, dest: ObjectRef, options: UploadOptions): Promise<UploadResult> {
  const handle = await open(path, "r");
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: "EISDIR" });
    const size = stat.size;
    ctx.progress.addTotal(size);
    if (size <= options.multipartThreshold) {
      await putFromFile(ctx, handle, path, size, dest, options);
      return { size, parts: 1 };
    }
    let plan = planParts(size, uploadPartSize(size, options.partSize));
    const source = { path: resolve(path), size, mtimeMs: stat.mtimeMs };
    const resumable = options.resumable ? await resumableUpload(ctx, dest, options, options.resumable, source, plan) : undefined;
    if (resumable?.point) plan = planParts(size, resumable.point.partSize);
    await multipartUpload(ctx, dest, options, async (upload) => {
      for (let i = 0; i < plan.count && !upload.failed; i++) {
        const part = partAt(plan, i);
        const buffer = await acquirePartBuffer(ctx, part.length, upload.signal);
        upload.send(part.number, part.offset, buffer, async () => {
          await readFully(handle, buffer, part.offset, path);
        });
      }
    }, resumable);
    return { size, parts: plan.count };
  } finally {
    await handle.close();
  }
}

async function putFromFile(ctx: TransferContext, handle: FileHandle, path: string, size: number, dest: ObjectRef, options: UploadOptions): Promise<void> {
  const buffer = size === 0 ? Buffer.alloc(0) : await ctx.memory.acquire(size, ctx.signal);
  try {
    await readFully(handle, buffer, 0, path);
    await queued(ctx, ctx.signal, () => putWithRetries(ctx, dest, buffer, options));
    ctx.progress.addDone(size);
  } finally {
    if (size > 0) ctx.memory.release(buffer);
  }
}

async function putWithRetries(ctx: TransferContext, dest: ObjectRef, body: Buffer, options: UploadOptions): Promise<string> {
  const checksum = options.checksum ? checksumValue(options.checksum, await digestOf(options.checksum, body)) : undefined;
  return withRetries(
    `PUT ${describe(dest)}`,
    ctx.retry,
    async () => {
      ctx.stats.requests++;
      const etag = await putObject(ctx.client, dest, body, options.attributes, { signal: ctx.signal, checksum });
      ctx.stats.bytesSent += body.length;
      return etag;
    },
    retryHooks(ctx, ctx.signal),
  );
}

/**
 * Forgets the local records of uploads to `dest` that S3 no longer has: a
 * file found finished on `--resume` may have been completed by a run killed
 * before it could remove its record.
 */
export async function forgetFinishedUploads(ctx: TransferContext, endpoint: string, dest: ObjectRef): Promise<void> {
  const records = await findUploadRecords(endpoint, dest);
  if (records.length > 0) await liveRecords(ctx, dest, records);
}

/**
 * Resumability of one file upload: with --resume, where to continue from;
 * without, a word about earlier interrupted uploads of this destination.
 * Either way the record to keep while this upload runs.
 */
async function resumableUpload(
  ctx: TransferContext,
  dest: ObjectRef,
  options: UploadOptions,
  settings: { endpoint: string; resume: boolean },
  source: UploadRecord["source"],
  plan: PartPlan,
): Promise<Resumable> {
  const previous = await findUploadRecords(settings.endpoint, dest);
  const template: Omit<UploadRecord, "uploadId" | "started"> = {
    version: 1,
    endpoint: settings.endpoint,
    bucket: dest.bucket,
    key: dest.key,
    source,
    partSize: plan.partSize,
    checksum: options.checksum,
  };
  if (!settings.resume) {
    const live = previous.length > 0 ? await liveRecords(ctx, dest, previous) : previous;
    if (live.length > 0) {
      const latest = live[0]!.record;
      ctx.notify(
        `${describe(dest)} has ${live.length === 1 ? "an interrupted upload" : `${live.length} interrupted uploads`} from s3x ` +
          `(upload ID ${latest.uploadId}, started ${latest.started}); this run starts a new one. ` +
          `Add --resume to continue it instead, or run: s3x rm --uploads ${describe(dest)}`,
      );
    }
    return { template };
  }
  const point = await findResumePoint(ctx, dest, previous, source, plan);
  return { template, point };
}

/** Reads exactly `target.length` bytes at `position`; a file that shrank is an error. */
async function readFully(handle: FileHandle, target: Buffer, position: number, path: string): Promise<void> {
  let filled = 0;
  while (filled < target.length) {
    const { bytesRead } = await handle.read(target, filled, target.length - filled, position + filled);
    if (bytesRead === 0) throw Object.assign(new Error(`${path} changed while being read (it is shorter than when the upload started)`), { code: "S3X_SOURCE_CHANGED" });
    filled += bytesRead;
  }
}

/**
 * Uploads a stream of unknown length (stdin): up to one part it is a single
 * PutObject; beyond that a multipart upload whose parts go out while the
 * stream is still being read, never holding more than the memory budget.
 */
export async function uploadStream(ctx: TransferContext, source: ChunkSource, dest: ObjectRef, options: UploadOptions): Promise<UploadResult> {
  // The first part buffer decides: a stream that ends inside it is one PutObject.
  const base = options.partSize ?? DEFAULT_PART_SIZE;
  const firstSize = streamPartSize(1, base);
  const first = await ctx.memory.acquire(firstSize, ctx.signal);
  let firstLength: number;
  try {
    firstLength = await source.fill(first);
  } catch (err) {
    ctx.memory.release(first);
    throw err;
  }
  if (firstLength < firstSize) {
    try {
      ctx.progress.addTotal(firstLength);
      await queued(ctx, ctx.signal, () => putWithRetries(ctx, dest, first.subarray(0, firstLength), options));
      ctx.progress.addDone(firstLength);
      return { size: firstLength, parts: 1 };
    } finally {
      ctx.memory.release(first);
    }
  }
  let size = 0;
  let parts = 0;
  await multipartUpload(ctx, dest, options, async (upload) => {
    let buffer: Buffer | undefined = first;
    let length = firstLength;
    for (let number = 1; !upload.failed; number++) {
      if (number > MAX_PARTS) throw new Error(`stdin is larger than ${MAX_PARTS} parts allow (raise --part-size)`);
      if (!buffer) {
        const partSize = streamPartSize(number, base);
        buffer = await acquirePartBuffer(ctx, partSize, upload.signal);
        length = await source.fill(buffer).catch((err: unknown) => {
          ctx.memory.release(buffer!);
          throw err;
        });
        if (length === 0) {
          ctx.memory.release(buffer);
          break;
        }
      }
      const full = length === buffer.length;
      ctx.progress.addTotal(length);
      size += length;
      parts = number;
      upload.send(number, size - length, buffer, async () => {}, length);
      buffer = undefined;
      if (!full) break;
    }
  });
  return { size, parts };
}

/** What the part producer of a multipart upload sees. */
interface MultipartSession {
  readonly signal: AbortSignal;
  readonly failed: boolean;
  /**
   * Queues part `number`: `prepare` fills the buffer (inside the request
   * slot, so reads overlap network transfers), then it is uploaded with
   * retries and the buffer goes back to the budget.
   */
  send(number: number, offset: number, buffer: Buffer, prepare: () => Promise<void>, length?: number): void;
}

/** What makes a multipart upload resumable: its local record and, when resuming, the parts S3 holds. */
interface Resumable {
  template: Omit<UploadRecord, "uploadId" | "started">;
  point?: ResumePoint;
}

/**
 * Create → parts (produced by `produce`) → Complete. Each part carries its
 * checksum in a header; for CRCs the full-object value is combined from the
 * part digests and sent with Complete, so S3 checks every byte it stored.
 *
 * On failure the upload is aborted so no orphaned parts keep costing money —
 * except when a resumable upload was interrupted (Ctrl-C, network loss) after
 * storing parts: then it stays, with its local record, for --resume.
 */
async function multipartUpload(
  ctx: TransferContext,
  dest: ObjectRef,
  options: UploadOptions,
  produce: (session: MultipartSession) => Promise<void>,
  resumable?: Resumable,
): Promise<void> {
  const { controller, dispose } = childController(ctx.signal);
  const signal = controller.signal;
  const hooks = retryHooks(ctx, signal);
  const point = resumable?.point;
  // A resumed upload keeps the algorithm it was created with: S3 demands the same one on every part.
  const algorithm = point ? point.checksum : options.checksum;
  const checksumType = algorithm ? (isCrc(algorithm) ? "FULL_OBJECT" : "COMPOSITE") : undefined;
  const uploadId =
    point?.uploadId ??
    (await withRetries(`CreateMultipartUpload ${describe(dest)}`, ctx.retry, () => {
      ctx.stats.requests++;
      return createMultipartUpload(ctx.client, dest, options.attributes, { signal, checksum: algorithm && checksumType ? { algorithm, type: checksumType } : undefined });
    }, hooks));
  let recordFile = point?.recordFile;
  if (resumable && !recordFile) {
    recordFile = await saveUploadRecord({
      ...resumable.template,
      partSize: point?.partSize ?? resumable.template.partSize,
      checksum: algorithm,
      uploadId,
      started: new Date().toISOString(),
    });
  }
  const completed: CompletedPart[] = [];
  // Part digests by offset, combined into the full-object CRC at Complete.
  const ranges: RangeDigest[] = [];
  const group = new TaskGroup(controller);

  const sendPart = async (number: number, offset: number, body: Buffer): Promise<void> => {
    const digest = algorithm ? await digestOf(algorithm, body) : undefined;
    if (digest && checksumType === "FULL_OBJECT") ranges.push({ offset, length: body.length, digest });
    const checksum: ChecksumValue | undefined = algorithm && digest ? checksumValue(algorithm, digest) : undefined;
    const stored = point?.stored.get(number);
    if (stored && partMatches(stored, body, checksum)) {
      // Already in S3 and verified against the file: reuse it, send nothing.
      completed.push({ partNumber: number, etag: stored.etag, checksum });
      ctx.stats.reusedParts++;
      ctx.stats.reusedBytes += body.length;
      return;
    }
    const etag = await withRetries(`UploadPart ${number} of ${describe(dest)}`, ctx.retry, async () => {
      ctx.stats.requests++;
      const tag = await uploadPart(ctx.client, dest, uploadId, number, body, { signal, checksum });
      ctx.stats.bytesSent += body.length;
      return tag;
    }, hooks, repeatHedge<string>(ctx, body.length)); // fan-out hook: tail parts may be hedged (engine/hedge.ts)
    completed.push({ partNumber: number, etag, checksum });
  };

  const session: MultipartSession = {
    signal,
    get failed() {
      return group.failed;
    },
    send(number, offset, buffer, prepare, length = buffer.length) {
      const body = buffer.subarray(0, length);
      group.add(
        queued(ctx, signal, async () => {
          await prepare();
          await sendPart(number, offset, body);
          ctx.progress.addDone(length);
        }).finally(() => ctx.memory.release(buffer)),
      );
    },
  };
  try {
    try {
      await produce(session);
    } catch (err) {
      controller.abort(err);
      await group.settle();
      throw group.firstError ?? err;
    }
    await group.wait();
    const full =
      algorithm && checksumType === "FULL_OBJECT"
        ? checksumValue(algorithm, await fullObjectDigest(algorithm, ranges, ranges.reduce((sum, r) => sum + r.length, 0)))
        : undefined;
    await withRetries(`CompleteMultipartUpload ${describe(dest)}`, ctx.retry, () => {
      ctx.stats.requests++;
      return completeMultipartUpload(ctx.client, dest, uploadId, completed, { signal, fullObjectChecksum: full, checksumType });
    }, hooks);
    // Resumed from S3's list, records of this upload may exist under another endpoint name: forget them all.
    if (point && !point.recordFile) await forgetUpload(uploadId);
    else if (recordFile) await removeUploadRecord(recordFile);
  } catch (err) {
    if (recordFile && completed.length > 0 && isInterruption(err, ctx.signal)) {
      ctx.notify(
        `kept the interrupted upload of ${describe(dest)} (upload ID ${uploadId}, ${completed.length} parts stored): ` +
          `run the same command with --resume to finish it, or s3x rm --uploads ${describe(dest)} to discard it`,
      );
    } else if (!options.keepFailedUpload) {
      await abortQuietly(ctx, dest, uploadId);
      if (recordFile) await removeUploadRecord(recordFile);
    }
    throw err;
  } finally {
    dispose();
  }
}

/** Best effort, a few attempts, never masking the original error. */
export async function abortQuietly(ctx: TransferContext, dest: ObjectRef, uploadId: string): Promise<void> {
  await withRetries(`AbortMultipartUpload ${describe(dest)}`, { ...ctx.retry, maxAttempts: 3 }, () => abortMultipartUpload(ctx.client, dest, uploadId)).catch(() => undefined);
}
