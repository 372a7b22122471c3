import type { ByteRange } from "../../plan/ranges.js";
import { queued, retryHooks, waitForQueueRoom, type TransferContext } from "../context.js";
import type { RangeVerifier } from "../integrity/verifier.js";
import { s3Url } from "../object-url.js";
import { withRetries } from "../retry.js";
import type { DownloadSink } from "../sinks/download-sink.js";
import type { ObjectRef, RangeResult } from "../../s3/operations.js";
import { sharedBytes, usableWorkers, WORKER_TASK_BYTES, type WorkerPool } from "../workers/pool.js";
import type { DigestPiece, DigestPlan, TaskResult } from "../workers/protocol.js";
import { HEDGE_MIN_BYTES, rangeHedge, type HedgeHook } from "../hedge.js";
import type { Run } from "./run.js";

/**
 * A download's ranges fetched by the data-plane worker threads (issue #37):
 * each range is written by the worker that received it, at its offset in the
 * temporary file this thread opened, and only its length, progress and
 * digests come back here. This thread keeps what must be one view: the
 * request queue, the memory budget (each range in flight is charged the two
 * slices its worker holds), the retry loop and pacer, the checksum verdict
 * and the resume journal.
 *
 * Not taken through workers: stdout and other in-order sinks (bytes must
 * come back in order), and objects with a SHA-256 to check (its digest
 * cannot be combined from pieces taken in several threads).
 */

/** Where a download's ranges may go to the workers: the pool, the file's descriptor and how to take its checksum. */
export interface WorkerTarget {
  pool: WorkerPool;
  ref: ObjectRef;
  fd: number;
  verifier: RangeVerifier | undefined;
  digest: DigestPlan | undefined;
}

/** The worker target for this download, or undefined when its ranges stay on this thread. */
export async function workerTarget(ctx: TransferContext, run: Run, sink: DownloadSink): Promise<WorkerTarget | undefined> {
  const pool = usableWorkers(ctx.workers);
  const fd = sink.positionalFd?.();
  if (!pool || fd === undefined || !sink.landed) return undefined;
  const verifier = await run.verifier;
  const digest = verifier?.digestPlan();
  if (verifier && !digest) return undefined;
  return { pool, ref: run.ref, fd, verifier, digest };
}

/** Queues one range for a worker; resolves once it is queued (the run's task group awaits it). */
export async function fetchInWorker(run: Run, target: WorkerTarget, range: ByteRange, etag: string): Promise<void> {
  const { ctx, ref, sink, signal, group } = run;
  await waitForQueueRoom(ctx);
  await ctx.memory.reserve(WORKER_TASK_BYTES, signal);
  const end = range.offset + range.length - 1;
  const task = async (): Promise<void> => {
    // Bytes on disk; a retry asks only for the ones after them (those a dead worker may have half-written are written again).
    let written = 0;
    let pinned = etag || undefined;
    await withRetries(
      `GET ${s3Url(ref)} bytes=${range.offset}-${end}`,
      ctx.retry,
      async (_n, routing): Promise<TaskResult> => {
        // A worker that died after its last byte was on disk, before its answer: nothing is left to ask for.
        if (written === range.length) return { etag: pinned ?? "" };
        ctx.stats.requests++;
        const result = await target.pool.run({
          work: { type: "range-to-file", ref, start: range.offset + written, end, ifMatch: pinned, fd: target.fd, digest: target.digest },
          avoid: routing.avoid,
          signal: routing.signal ?? signal,
          hedgeRouting: routing,
          onLanded: (bytes, pieces) => {
            for (const piece of pieces) target.verifier?.addDigest(piece.offset, piece.length, piece.digest);
            written += bytes;
            ctx.stats.bytesReceived += bytes;
            ctx.progress.addDone(bytes);
          },
        });
        pinned ??= result.etag || undefined;
        return result;
      },
      retryHooks(ctx, signal),
      fileRangeHedge(ctx, target, range, () => ({ written, pinned }), (all) => (written = all), signal),
    );
    sink.landed!(range.offset, range.length);
  };
  group.add(queued(ctx, signal, task).finally(() => ctx.memory.unreserve(WORKER_TASK_BYTES)));
}

/**
 * GET bytes [start, end] into `buffer` (a part buffer in shared memory) in a
 * worker, retrying as fetchRange does: a retry asks only for the bytes the
 * earlier attempts did not deliver.
 */
export function fetchRangeInWorker(
  ctx: TransferContext,
  pool: WorkerPool,
  ref: ObjectRef,
  start: number,
  end: number,
  ifMatch: string | undefined,
  buffer: Buffer,
  signal: AbortSignal,
  whole = false,
): Promise<RangeResult> {
  const length = end - start + 1;
  let received = 0;
  let etag = ifMatch;
  return withRetries<RangeResult>(
    `GET ${s3Url(ref)} bytes=${start}-${end}`,
    ctx.retry,
    async (_n, routing) => {
      // A worker that died after the last byte landed, before its answer: nothing is left to ask for.
      if (received === length) return { bytes: received, objectSize: 0, etag: etag ?? "", ranged: true };
      ctx.stats.requests++;
      const target = sharedBytes(buffer.subarray(received, length));
      if (!target) throw new Error("a worker thread can fill only a part buffer in shared memory");
      const result = await pool.run({
        work: { type: "range-to-memory", ref, start: start + received, end, ifMatch: etag, target, whole },
        avoid: routing.avoid,
        signal: routing.signal ?? signal,
        hedgeRouting: routing,
        onLanded: (bytes) => {
          received += bytes;
          ctx.stats.bytesReceived += bytes;
          ctx.progress.addDone(bytes);
        },
      });
      etag ??= result.etag || undefined;
      const { objectSize = 0, lastModified, ranged = true, checksum, checksumType } = result;
      return { bytes: received, objectSize, etag: result.etag, lastModified, ranged, checksum, checksumType };
    },
    retryHooks(ctx, signal),
    // At the tail a straggling range may get a duplicate in a worker, into a shared scratch buffer (engine/hedge.ts).
    rangeHedge<RangeResult>(ctx.hedger, ctx.memory, {
      length,
      received: () => received,
      fetch: async (from, scratch, onBytes, routing) => {
        const into = sharedBytes(scratch.subarray(0, length - from));
        if (!into) throw new Error("a worker thread can fill only a buffer in shared memory");
        ctx.stats.requests++;
        const result = await pool.run({
          work: { type: "range-to-memory", ref, start: start + from, end, ifMatch: etag, target: into },
          avoid: routing.avoid,
          signal: routing.signal ?? signal,
          hedgeRouting: routing,
          onLanded: onBytes,
        });
        return { bytes: length - from, objectSize: result.objectSize ?? 0, etag: result.etag, ranged: true };
      },
      adopted: (result, rest) => {
        rest.copy(buffer, received);
        received += rest.length;
        ctx.stats.bytesReceived += rest.length;
        ctx.progress.addDone(rest.length);
        return { ...result, bytes: received };
      },
    }),
  );
}

/**
 * At the tail, a straggling range to a file may get a duplicate in a worker
 * (engine/hedge.ts) for the bytes not on disk yet, written at the same
 * offsets: both write the same version's bytes (If-Match), so whichever
 * writes last changes nothing. The duplicate's checksum pieces start where
 * the original's slices did (both cut every SLICE_BYTES from the range's
 * start, and at part boundaries), so pieces written by both have the same
 * offset and length and count once. Its worker's two slices come from the
 * memory budget, only if free now.
 */
function fileRangeHedge(
  ctx: TransferContext,
  target: WorkerTarget,
  range: ByteRange,
  state: () => { written: number; pinned: string | undefined },
  done: (all: number) => void,
  signal: AbortSignal,
): HedgeHook<TaskResult> | undefined {
  if (range.length < HEDGE_MIN_BYTES) return undefined;
  const end = range.offset + range.length - 1;
  return {
    tail: ctx.hedger,
    duplicate: () => {
      if (!ctx.memory.tryReserve(WORKER_TASK_BYTES)) return undefined;
      const { written: from, pinned } = state();
      const pieces: DigestPiece[] = [];
      return {
        run: (routing) => {
          ctx.stats.requests++;
          return target.pool.run({
            work: { type: "range-to-file", ref: target.ref, start: range.offset + from, end, ifMatch: pinned, fd: target.fd, digest: target.digest },
            avoid: routing.avoid,
            signal: routing.signal ?? signal,
            hedgeRouting: routing,
            onLanded: (bytes, landed) => {
              pieces.push(...landed);
              ctx.stats.bytesReceived += bytes;
            },
          });
        },
        adopt: (result) => {
          // The original has stopped: what it had not written, the duplicate did.
          for (const piece of pieces) target.verifier?.addDigest(piece.offset, piece.length, piece.digest);
          ctx.progress.addDone(range.length - state().written);
          done(range.length);
          return result;
        },
        discard: () => ctx.memory.unreserve(WORKER_TASK_BYTES),
      };
    },
  };
}
