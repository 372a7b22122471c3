import { partAt, planParts } from "../plan/parts.js";
import { coveredBytes, type ByteRange } from "../plan/ranges.js";
import { ObjectLargerThanBufferError, type ObjectRef, type RangeResult } from "../s3/operations.js";
import { ObjectScope, queued, type TransferContext } from "./context.js";
import { fetchRanges, landFirst } from "./download/parts.js";
import { fetchRange, headWithRetries } from "./download/range-fetch.js";
import { fetchRangeInWorker } from "./download/worker-ranges.js";
import { sharedBytes, usableWorkers } from "./workers/pool.js";
import { previousDownload, resumeDownload } from "./download/resume.js";
import type { DownloadOptions, DownloadResult, Run } from "./download/run.js";
import { ChecksumMismatchError, etagMd5, verifierFor, verify } from "./download/verification.js";
import { isInterruption } from "./resume/interruption.js";
import { RequestError } from "./retry.js";
import type { DownloadSink } from "./sinks/download-sink.js";
import { TaskGroup } from "./task-group.js";
import { s3Url } from "./object-url.js";

export type { DownloadOptions, DownloadResult } from "./download/run.js";
export { ChecksumMismatchError } from "./download/verification.js";

/** ObjectLargerThanBufferError's code, as it comes back from a worker thread (RelayedFailure). */
const OBJECT_GREW = new ObjectLargerThanBufferError(0).code;

/**
 * One object download (a "meta request" in aws-c-s3's terms): the first
 * ranged GET reveals the size and ETag, the other ranges are fetched
 * concurrently with If-Match on that ETag, so an object replaced mid-way
 * fails instead of mixing two versions. Parts go to the sink as they land.
 *
 * Integrity: when S3 stores a full-object CRC (asked for with
 * x-amz-checksum-mode), each range's CRC is computed as it lands and the
 * combination is compared with it before the file gets its final name. A
 * mismatch removes the temporary file and the object is fetched once more,
 * not again and again: corruption that repeats is reported.
 */
export async function downloadObject(
  ctx: TransferContext,
  ref: ObjectRef,
  sink: DownloadSink,
  partSize: number,
  sizeHint?: number,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  try {
    return await downloadOnce(ctx, ref, sink, partSize, sizeHint, options);
  } catch (err) {
    // A file can be fetched again from scratch; bytes already sent to a stream cannot.
    if (!(err instanceof ChecksumMismatchError) || !sink.forgetPrevious) throw err;
    ctx.notify(`${err.message}; fetching it once more`);
    return await downloadOnce(ctx, ref, sink, partSize, sizeHint, { ...options, resume: false });
  }
}

async function downloadOnce(ctx: TransferContext, ref: ObjectRef, sink: DownloadSink, partSize: number, sizeHint: number | undefined, options: DownloadOptions): Promise<DownloadResult> {
  const scope = new ObjectScope(ctx.signal);
  const run: Run = {
    ctx,
    ref,
    sink,
    scope,
    get signal() {
      return scope.signal;
    },
    group: new TaskGroup(scope),
    verifier: Promise.resolve(undefined),
  };
  try {
    // One run at a time per destination once a journal is involved; the sink takes its lock when it finds or starts one.
    await sink.claim?.((line) => ctx.debug?.(line), true);
    const previous = await previousDownload(ctx, ref, sink, options);
    if (previous) {
      const resumed = await resumeDownload(run, previous, partSize, options);
      if (resumed) return resumed;
      await sink.forgetPrevious?.(); // it cannot be resumed: start over from nothing
    }
    return await freshDownload(run, partSize, sizeHint, options);
  } catch (err) {
    scope.abort(err);
    await run.group.settle();
    const failure = run.group.firstError ?? err;
    const kept = await sink.discard(isInterruption(failure, ctx.signal) && !(failure instanceof ChecksumMismatchError));
    if (kept && sink.previous) {
      const partial = await sink.previous(true); // its lock is released: read, never re-take it
      if (partial) {
        ctx.notify(
          `kept the partial download of ${s3Url(ref)} (${coveredBytes(partial.done)} of ${partial.identity.size} bytes in ${partial.location}): ` +
            `run the same command with --resume to finish it`,
        );
      }
    }
    throw failure;
  } finally {
    scope.dispose();
  }
}

async function freshDownload(run: Run, partSize: number, sizeHint: number | undefined, options: DownloadOptions): Promise<DownloadResult> {
  const { ctx, ref, sink, group } = run;
  // Until the first answer shows more requests are needed, this is the command's signal.
  const signal = run.signal;
  // A listing already told the size: a small object needs a small buffer.
  const firstSize = sizeHint !== undefined && sizeHint > 0 ? Math.min(partSize, sizeHint) : partSize;
  if (sizeHint === 0) return await downloadEmpty(ctx, ref, sink, signal);
  // An object the listing says fits in one part is asked for whole: a plain GET costs the server less than a ranged one.
  const whole = sizeHint !== undefined && sizeHint <= partSize;
  // An in-order sink shared by many objects (engine/sinks/object-stream.ts) says when this object's turn is near.
  await sink.waitForRoom?.(0);
  const firstBuffer = await ctx.memory.acquire(firstSize, signal);
  let first: RangeResult;
  try {
    // In a worker only when the user asked for workers (WorkerPool.carriesWholeObjects), for an object of a
    // listed set (all of a small one's requests) or once workers run: a lone object of unknown size (`cat`,
    // a `cp`) starts none for its first request.
    const workers = ctx.workers?.carriesWholeObjects ? ctx.workers : undefined;
    const pool = sizeHint !== undefined || workers?.running ? usableWorkers(workers) : undefined;
    const fetchFirst = (): Promise<RangeResult> =>
      pool && sharedBytes(firstBuffer)
        ? fetchRangeInWorker(ctx, pool, ref, 0, firstSize - 1, undefined, firstBuffer, signal, whole)
        : fetchRange(ctx, ref, 0, firstSize - 1, undefined, firstBuffer, signal, whole);
    first = await queued(ctx, signal, fetchFirst);
  } catch (err) {
    ctx.memory.release(firstBuffer);
    // A range on an empty object is unsatisfiable (416): confirm with HEAD.
    if (err instanceof RequestError && err.failure.status === 416) return await downloadEmpty(ctx, ref, sink, signal);
    // It grew since it was listed: start over as for an object of unknown size.
    if (err instanceof RequestError && (err.cause instanceof ObjectLargerThanBufferError || err.failure.code === OBJECT_GREW)) {
      return await freshDownload(run, partSize, undefined, options);
    }
    throw err;
  }
  if (!first.ranged && first.objectSize > firstSize) {
    ctx.memory.release(firstBuffer);
    throw new Error(`GET ${s3Url(ref)}: the server ignored the Range header`);
  }
  const size = first.objectSize;
  if (first.bytes < size) run.scope.split();
  ctx.progress.addTotal(size);
  ctx.progress.addDone(0);
  run.verifier = verifierFor(run, first, size);
  // One response held it all: nothing to resume, so no journal (a file less to create per small object).
  await sink.open(size, { etag: first.etag, size }, first.bytes < size);
  const firstData = firstBuffer.subarray(0, first.bytes);
  const md5 = etagMd5(run, first, firstData, size, options);
  landFirst(run, 0, firstData, firstBuffer);

  // The rest of the object, after the first response, in part-size ranges.
  const rest = planParts(size - first.bytes, partSize);
  const ranges: ByteRange[] = [];
  for (let i = 0; i < rest.count; i++) {
    const tail = partAt(rest, i);
    ranges.push({ offset: first.bytes + tail.offset, length: tail.length });
  }
  await fetchRanges(run, ranges, 1, first.etag, partSize);
  await group.wait();
  await verify(run, size, [], first.etag, options, md5);
  await sink.commit({ lastModified: first.lastModified });
  return { size, etag: first.etag, lastModified: first.lastModified };
}

/**
 * How many parts a download lands for an object of `size` bytes when the
 * size is known beforehand (freshDownload with the listed size as its hint):
 * one stream of many objects numbers its pieces by it.
 */
export function downloadPartCount(size: number, partSize: number): number {
  if (size === 0) return 0;
  return 1 + planParts(size - Math.min(partSize, size), partSize).count;
}

async function downloadEmpty(ctx: TransferContext, ref: ObjectRef, sink: DownloadSink, signal: AbortSignal): Promise<DownloadResult> {
  const info = await headWithRetries(ctx, ref, signal);
  if (info.size !== 0) throw new Error(`GET ${s3Url(ref)}: range not satisfiable for an object of ${info.size} bytes`);
  await sink.open(0, { etag: info.etag, size: 0 }, false);
  await sink.commit({ lastModified: info.lastModified });
  return { size: 0, etag: info.etag, lastModified: info.lastModified };
}
