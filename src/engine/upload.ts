import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { open, stat as statPath, type FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import { partAt, planParts, streamPartSize, type PartPlan, uploadPartSize, DEFAULT_PART_SIZE, MAX_PARTS } from "../plan/parts.js";
import type { ChecksumValue, CompletedPart, ObjectRef } from "../s3/operations.js";
import { acquirePartBuffer, queued, retryHooks, type TransferContext } from "./context.js";
import { checksumValue, digestOf } from "./integrity/checksums.js";
import { ChecksumIgnoredError, withChecksumFallback } from "./integrity/checksum-support.js";
import { findResumePoint, liveRecords } from "./resume/upload-resume.js";
import { findUploadRecords, type UploadRecord } from "./resume/upload-journal.js";
import { lockDestination } from "./resume/upload-lock.js";
import { multipartUpload, type MultipartOptions, type Resumable } from "./multipart-upload.js";
import { sendPutAttempt } from "./workers/write-attempts.js";
import { withRetries } from "./retry.js";
import type { ChunkSource } from "./sources/chunk-source.js";
import { s3Url } from "./object-url.js";

export interface UploadOptions extends MultipartOptions {
  /** Objects up to this size go in one PutObject. */
  multipartThreshold: number;
  /** Requested part size; raised automatically to stay within 10,000 parts. */
  partSize?: number;
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

/** Uploads a regular file: parts are read at their offsets and sent concurrently. */
export async function uploadFile(ctx: TransferContext, path: string, dest: ObjectRef, options: UploadOptions): Promise<UploadResult> {
  const handle = await open(path, "r");
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: "EISDIR" });
    const size = stat.size;
    ctx.progress.addTotal(size);
    if (size <= options.multipartThreshold) {
      await putFromFile(ctx, handle, path, stat, dest, options);
      return { size, parts: 1 };
    }
    let plan = planParts(size, uploadPartSize(size, options.partSize));
    const source = { path: resolve(path), size, mtimeMs: stat.mtimeMs };
    // One s3x at a time continues (or starts) a resumable upload of this key.
    const lock = options.resumable ? await lockDestination(options.resumable.endpoint, dest) : undefined;
    try {
      const fileParts = (partSize: number) => partEtagsOf(handle, path, size, partSize);
      const resumable = options.resumable ? await resumableUpload(ctx, dest, options, options.resumable, source, plan, fileParts) : undefined;
      if (resumable === "completed") {
        ctx.stats.reusedBytes += size;
        ctx.progress.addDone(size);
        return { size, parts: plan.count };
      }
      if (resumable?.point) plan = planParts(size, resumable.point.partSize);
      await multipartUpload(ctx, dest, options, async (upload) => {
        for (let i = 0; i < plan.count && !upload.failed; i++) {
          const part = partAt(plan, i);
          const buffer = await acquirePartBuffer(ctx, part.length, upload.signal);
          upload.send(part.number, part.offset, buffer, async () => {
            await readFully(handle, buffer, part.offset, path);
          });
        }
        // Parts read before and after a change would make an object that never was the file.
        upload.beforeComplete(() => checkUnchanged(handle, path, stat, { byName: true }));
      }, resumable);
    } finally {
      await lock?.release();
    }
    return { size, parts: plan.count };
  } finally {
    await handle.close();
  }
}

async function putFromFile(ctx: TransferContext, handle: FileHandle, path: string, before: Stats, dest: ObjectRef, options: UploadOptions): Promise<void> {
  const size = before.size;
  const buffer = size === 0 ? Buffer.alloc(0) : await ctx.memory.acquire(size, ctx.signal);
  try {
    await readFully(handle, buffer, 0, path);
    // One fstat: a file written while it was read is not sent (by name too would cost a stat per small file).
    await checkUnchanged(handle, path, before, { byName: false });
    await queued(ctx, ctx.signal, () => putWithRetries(ctx, dest, buffer, options));
    ctx.progress.addDone(size);
  } finally {
    if (size > 0) ctx.memory.release(buffer);
  }
}

async function putWithRetries(ctx: TransferContext, dest: ObjectRef, body: Buffer, options: UploadOptions): Promise<string> {
  const support = ctx.checksumSupport;
  const requested = options.checksumRequested === true;
  // A default checksum the server has shown it ignores is not even computed.
  const algorithm = options.checksum && (requested || support.status !== "ignored") ? options.checksum : undefined;
  const computed = algorithm ? checksumValue(algorithm, await digestOf(algorithm, body)) : undefined;
  // Asked for, and the server has shown it does not check it: an error, as
  // for a multipart upload, before anything is written.
  if (requested && computed && support.status === "ignored") throw checksumIgnored(computed, s3Url(dest), "nothing was sent");
  let unconfirmed: ChecksumValue | undefined;
  const etag = await withRetries(
    `PUT ${s3Url(dest)}`,
    ctx.retry,
    async (_n, routing) => {
      ctx.stats.requests++;
      const toSend = requested || support.status !== "ignored" ? computed : undefined;
      const etag = await withChecksumFallback(support, toSend, requested, (checksum) =>
        sendPutAttempt(ctx, dest, body, options.attributes, {
          signal: ctx.signal,
          routing,
          checksum,
          // Until an answer has shown the server checks it, the payload stays signed as well (over plain HTTP).
          checksumChecked: support.status === "checked",
          echoed: (value) => (unconfirmed = noteEcho(ctx, checksum, value, requested)),
        }),
      );
      ctx.stats.bytesSent += body.length;
      return etag;
    },
    retryHooks(ctx, ctx.signal),
  );
  // Learnt from the answer: the object is stored by then (whole, with the
  // ETag S3 gave it), but the check the user asked for did not happen.
  if (unconfirmed) throw checksumIgnored(unconfirmed, s3Url(dest), "the object is stored, unverified by it");
  return etag;
}

function checksumIgnored(sent: ChecksumValue, url: string, outcome: string): ChecksumIgnoredError {
  return new ChecksumIgnoredError(
    `the server did not confirm the ${sent.algorithm} checksum of ${url} (it does not check x-amz-checksum-*): ${outcome} ` +
      `(run with --checksum-algorithm none to upload without it)`,
  );
}

/**
 * A single PUT's checksum the server did not echo was not checked by it.
 * The command learns so either way. When the user asked for the checksum
 * it is counted (--json unconfirmedChecksums) and returned: the upload then
 * fails, as a multipart one does (README). A default one goes quietly: the
 * upload was protected by the signed payload (plain HTTP) or TLS instead,
 * and later ones go without it.
 */
function noteEcho(ctx: TransferContext, sent: ChecksumValue | undefined, echoed: ChecksumValue | undefined, requested: boolean): ChecksumValue | undefined {
  if (!sent) return undefined;
  const support = ctx.checksumSupport;
  const before = support.status;
  support.learn(sent, echoed);
  if (echoed?.algorithm === sent.algorithm) return undefined;
  if (!requested) {
    if (before === undefined) ctx.debug?.(`the server does not check ${sent.algorithm} checksums (x-amz-checksum-*): uploading without them`);
    return undefined;
  }
  ctx.stats.unconfirmedChecksums++;
  return sent;
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
  fileParts: (partSize: number) => Promise<CompletedPart[]>,
): Promise<Resumable | "completed"> {
  const previous = await findUploadRecords(settings.endpoint, dest);
  const template: Omit<UploadRecord, "uploadId" | "started"> = {
    version: 1,
    endpoint: settings.endpoint,
    bucket: dest.bucket,
    key: dest.key,
    source,
    partSize: plan.partSize,
    checksum: options.checksum,
    attributes: options.attributes,
  };
  if (!settings.resume) {
    const live = previous.length > 0 ? await liveRecords(ctx, dest, previous) : previous;
    if (live.length > 0) {
      const latest = live[0]!.record;
      ctx.notify(
        `${s3Url(dest)} has ${live.length === 1 ? "an interrupted upload" : `${live.length} interrupted uploads`} from s3x ` +
          `(upload ID ${latest.uploadId}, started ${latest.started}); this run starts a new one. ` +
          `Add --resume to continue it instead, or run: s3x rm --uploads ${s3Url(dest)}`,
      );
    }
    return { template };
  }
  // A default checksum is dropped where the server ignores it, so an upload of this run's may have been created without it.
  const checksum = options.checksumRequested ? options.checksum : "any";
  const point = await findResumePoint(ctx, dest, previous, source, { attributes: options.attributes, checksum }, fileParts);
  return point === "completed" ? point : { template, point };
}

/** The parts a file cut in `partSize` pieces makes, each with the MD5 ETag S3 gives it; read 1 MiB at a time. */
async function partEtagsOf(handle: FileHandle, path: string, size: number, partSize: number): Promise<CompletedPart[]> {
  const slice = Buffer.allocUnsafe(Math.min(partSize, 1024 * 1024));
  const parts: CompletedPart[] = [];
  for (let offset = 0, number = 1; offset < size; offset += partSize, number++) {
    const end = Math.min(size, offset + partSize);
    const md5 = createHash("md5");
    for (let at = offset; at < end; at += slice.length) {
      const piece = slice.subarray(0, Math.min(slice.length, end - at));
      await readFully(handle, piece, at, path);
      md5.update(piece);
    }
    parts.push({ partNumber: number, etag: md5.digest("hex") });
  }
  return parts;
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
 * Fails (S3X_SOURCE_CHANGED) when the file is not the one it was when the
 * upload started: its size, modification time or status-change time differ
 * (fstat of the open file: an in-place write, an append, a truncation, and
 * also a rename, a new link or a chmod, which change the ctime) or, `byName`,
 * its name now leads to another file. Called once every byte was read and
 * before the object is made, so a changed file is never stored; a change
 * undone within the file system's timestamp resolution goes unseen.
 */
export async function checkUnchanged(handle: FileHandle, path: string, before: Stats, { byName }: { byName: boolean }): Promise<void> {
  if (!before.isFile()) return;
  const now = await handle.stat();
  let change: string | undefined;
  if (now.size !== before.size) change = `its size went from ${before.size} to ${now.size} bytes`;
  else if (now.mtimeMs !== before.mtimeMs) change = "it was modified";
  else if (now.ctimeMs !== before.ctimeMs) change = "its status-change time (ctime) moved: it was written, renamed, linked or had its mode changed";
  else if (byName) {
    const named = await statPath(path).catch(() => undefined);
    if (!named) change = "it is no longer there under its name";
    else if (named.ino !== before.ino || named.dev !== before.dev) change = "its name now leads to another file";
  }
  if (change === undefined) return;
  throw Object.assign(new Error(`${path} changed while being uploaded (${change}); it was not stored: upload it again once it stays unchanged`), { code: "S3X_SOURCE_CHANGED" });
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
