import type { ByteRange } from "../../plan/ranges.js";
import { queued, retryHooks, waitForQueueRoom, type TransferContext } from "../context.js";
import type { RangeVerifier } from "../integrity/verifier.js";
import { s3Url } from "../object-url.js";
import { withRetries } from "../retry.js";
import type { DownloadSink } from "../sinks/download-sink.js";
import type { ObjectRef, RangeResult } from "../../s3/operations.js";
import { sharedBytes, WORKER_TASK_BYTES, type WorkerPool } from "../workers/pool.js";
import type { DigestPlan } from "../workers/protocol.js";
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
  fd: number;
  verifier: RangeVerifier | undefined;
  digest: DigestPlan | undefined;
}

/** The worker target for this download, or undefined when its ranges stay on this thread. */
export async function workerTarget(ctx: TransferContext, run: Run, sink: DownloadSink): Promise<WorkerTarget | undefined> {
  const pool = ctx.workers;
  const fd = sink.positionalFd?.();
  if (!pool || fd === undefined || !sink.landed) return undefined;
  const verifier = await run.verifier;
  const digest = verifier?.digestPlan();
  if (verifier && !digest) return undefined;
  return { pool, fd, verifier, digest };
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
      async (_n, routing) => {
        // A worker that died after its last byte was on disk, before its answer: nothing is left to ask for.
        if (written === range.length) return { etag: pinned ?? "" };
        ctx.stats.requests++;
        const result = await target.pool.run({
          work: { type: "range-to-file", ref, start: range.offset + written, end, ifMatch: pinned, fd: target.fd, digest: target.digest },
          avoid: routing.avoid,
          signal,
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
export function fetchRangeInWorker(ctx: TransferContext, pool: WorkerPool, ref: ObjectRef, start: number, end: number, ifMatch: string | undefined, buffer: Buffer, signal: AbortSignal): Promise<RangeResult> {
  let received = 0;
  let etag = ifMatch;
  return withRetries(
    `GET ${s3Url(ref)} bytes=${start}-${end}`,
    ctx.retry,
    async (_n, routing) => {
      // A worker that died after the last byte landed, before its answer: nothing is left to ask for.
      if (received === end - start + 1) return { bytes: received, objectSize: 0, etag: etag ?? "", ranged: true };
      ctx.stats.requests++;
      const target = sharedBytes(buffer.subarray(received, end - start + 1));
      if (!target) throw new Error("a worker thread can fill only a part buffer in shared memory");
      const result = await pool.run({
        work: { type: "range-to-memory", ref, start: start + received, end, ifMatch: etag, target },
        avoid: routing.avoid,
        signal,
        onLanded: (bytes) => {
          received += bytes;
          ctx.stats.bytesReceived += bytes;
          ctx.progress.addDone(bytes);
        },
      });
      etag ??= result.etag || undefined;
      return { bytes: received, objectSize: result.objectSize ?? 0, etag: result.etag, ranged: true };
    },
    retryHooks(ctx, signal),
  );
}
