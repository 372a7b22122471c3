import { open, type FileHandle } from "node:fs/promises";
import { partAt, planParts, streamPartSize, uploadPartSize, DEFAULT_PART_SIZE, MAX_PARTS } from "../plan/parts.js";
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  putObject,
  uploadPart,
  type CompletedPart,
  type ObjectAttributes,
  type ObjectRef,
} from "../s3/operations.js";
import { acquirePartBuffer, childController, retryHooks, type TransferContext } from "./context.js";
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
    const partSize = uploadPartSize(size, options.partSize);
    const plan = planParts(size, partSize);
    await multipartUpload(ctx, dest, options, async (upload) => {
      for (let i = 0; i < plan.count && !upload.failed; i++) {
        const part = partAt(plan, i);
        const buffer = await acquirePartBuffer(ctx, part.length, upload.signal);
        upload.send(part.number, buffer, async () => {
          await readFully(handle, buffer, part.offset, path);
        });
      }
    });
    return { size, parts: plan.count };
  } finally {
    await handle.close();
  }
}

async function putFromFile(ctx: TransferContext, handle: FileHandle, path: string, size: number, dest: ObjectRef, options: UploadOptions): Promise<void> {
  const buffer = size === 0 ? Buffer.alloc(0) : await ctx.memory.acquire(size, ctx.signal);
  try {
    await readFully(handle, buffer, 0, path);
    await ctx.queue.add(() => putWithRetries(ctx, dest, buffer, options), { signal: ctx.signal });
    ctx.progress.addDone(size);
  } finally {
    if (size > 0) ctx.memory.release(buffer);
  }
}

function putWithRetries(ctx: TransferContext, dest: ObjectRef, body: Buffer, options: UploadOptions): Promise<string> {
  return withRetries(
    `PUT ${describe(dest)}`,
    ctx.retry,
    () => {
      ctx.stats.requests++;
      return putObject(ctx.client, dest, body, options.attributes, { signal: ctx.signal });
    },
    retryHooks(ctx, ctx.signal),
  );
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
      await ctx.queue.add(() => putWithRetries(ctx, dest, first.subarray(0, firstLength), options), { signal: ctx.signal });
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
      upload.send(number, buffer, async () => {}, length);
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
  send(number: number, buffer: Buffer, prepare: () => Promise<void>, length?: number): void;
}

/**
 * Create → parts (produced by `produce`) → Complete; on any failure or
 * cancellation the upload is aborted so no orphaned parts keep costing money.
 */
async function multipartUpload(ctx: TransferContext, dest: ObjectRef, options: UploadOptions, produce: (session: MultipartSession) => Promise<void>): Promise<void> {
  const { controller, dispose } = childController(ctx.signal);
  const signal = controller.signal;
  const hooks = retryHooks(ctx, signal);
  const uploadId = await withRetries(`CreateMultipartUpload ${describe(dest)}`, ctx.retry, () => {
    ctx.stats.requests++;
    return createMultipartUpload(ctx.client, dest, options.attributes, { signal });
  }, hooks);
  const completed: CompletedPart[] = [];
  const group = new TaskGroup(controller);
  const session: MultipartSession = {
    signal,
    get failed() {
      return group.failed;
    },
    send(number, buffer, prepare, length = buffer.length) {
      const body = buffer.subarray(0, length);
      group.add(
        ctx.queue
          .add(
            async () => {
              await prepare();
              const etag = await withRetries(`UploadPart ${number} of ${describe(dest)}`, ctx.retry, () => {
                ctx.stats.requests++;
                return uploadPart(ctx.client, dest, uploadId, number, body, { signal });
              }, hooks, repeatHedge<string>(ctx, length)); // fan-out hook: tail parts may be hedged (engine/hedge.ts)
              completed.push({ partNumber: number, etag });
              ctx.progress.addDone(length);
            },
            { signal },
          )
          .finally(() => ctx.memory.release(buffer)),
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
    await withRetries(`CompleteMultipartUpload ${describe(dest)}`, ctx.retry, () => {
      ctx.stats.requests++;
      return completeMultipartUpload(ctx.client, dest, uploadId, completed, { signal });
    }, hooks);
  } catch (err) {
    if (!options.keepFailedUpload) await abortQuietly(ctx, dest, uploadId);
    throw err;
  } finally {
    dispose();
  }
}

/** Best effort, a few attempts, never masking the original error. */
export async function abortQuietly(ctx: TransferContext, dest: ObjectRef, uploadId: string): Promise<void> {
  await withRetries(`AbortMultipartUpload ${describe(dest)}`, { ...ctx.retry, maxAttempts: 3 }, () => abortMultipartUpload(ctx.client, dest, uploadId)).catch(() => undefined);
}
