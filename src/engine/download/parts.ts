import type { ByteRange } from "../../plan/ranges.js";
import type { RangeResult } from "../../s3/operations.js";
import { acquirePartBuffer, queued, type TransferContext } from "../context.js";
import type { RangeStream } from "../integrity/verifier.js";
import { RangeSlices, SLICE_BYTES } from "../range-slices.js";
import type { DownloadSink } from "../sinks/download-sink.js";
import { fetchRange } from "./range-fetch.js";
import type { Run } from "./run.js";
import { recordDigest } from "./verification.js";
import { fetchInWorker, fetchRangeInWorker, workerTarget } from "./worker-ranges.js";
import { usableWorkers } from "../workers/pool.js";

/**
 * Emits a download's part requests: each range gets a request slot and a
 * buffer from the transfer context, and goes to the sink as it lands.
 */

/** The range fetched alone (to learn the size, or to check the version) goes to the sink as part 0. */
export function landFirst(run: Run, offset: number, data: Buffer, buffer: Buffer): void {
  run.group.add(
    recordDigest(run, offset, data)
      .then(() => run.sink.write(0, offset, data))
      .finally(() => run.ctx.memory.release(buffer)),
  );
}

/** Fetches `ranges` concurrently (sink index from `firstIndex`), writing each to the sink as it lands. */
export async function fetchRanges(run: Run, ranges: readonly ByteRange[], firstIndex: number, etag: string, partSize: number): Promise<void> {
  const { ctx, ref, sink, signal, group } = run;
  const sliced = writesInSlices(ctx, sink, partSize);
  // A file's ranges go to the worker threads when there are any (engine/workers).
  const workers = sliced && ranges.length > 0 ? await workerTarget(ctx, run, sink) : undefined;
  for (let i = 0; i < ranges.length && !group.failed; i++) {
    const index = firstIndex + i;
    const range = ranges[i]!;
    if (workers) {
      await fetchInWorker(run, workers, range, etag);
      continue;
    }
    if (sliced) {
      await fetchInSlices(run, range, index, etag);
      continue;
    }
    await roomFor(sink, index, signal);
    // Buffers are taken in part order, so the part the sink needs next
    // always holds one: an ordered sink can never deadlock the budget.
    const buffer = await acquirePartBuffer(ctx, partSize, signal);
    const end = range.offset + range.length - 1;
    const data = buffer.subarray(0, range.length);
    // Into a part buffer the worker threads share, when there are any (engine/workers).
    const pool = usableWorkers(ctx.workers);
    const fetch = (): Promise<RangeResult> =>
      pool ? fetchRangeInWorker(ctx, pool, ref, range.offset, end, etag || undefined, buffer, signal) : fetchRange(ctx, ref, range.offset, end, etag || undefined, buffer, signal);
    const land = (): Promise<void> => recordDigest(run, range.offset, data).then(() => sink.write(index, range.offset, data));
    group.add(
      (holdSlotThroughWrite(sink)
        ? queued(ctx, signal, () => fetch().then(land))
        : queued(ctx, signal, fetch).then(land)
      ).finally(() => ctx.memory.release(buffer)),
    );
  }
}

/**
 * Waits until an in-order sink (stdout) has room for part `index`, or the
 * run is cancelled: once a part fails for good, the parts before `index`
 * may never be written (a part waiting for its checksum is cancelled too),
 * so the room would never come and the download would hang instead of
 * failing (issue #35).
 */
async function roomFor(sink: DownloadSink, index: number, signal: AbortSignal): Promise<void> {
  if (!sink.waitForRoom) return;
  signal.throwIfAborted();
  let onAbort: () => void = () => undefined;
  const cancelled = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error("download cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([sink.waitForRoom(index), cancelled]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * A sink that takes parts at any offset as they come (a file) gets each
 * range in slices, written as the body arrives (engine/range-slices.ts),
 * when parts are large enough for that to save memory.
 */
function writesInSlices(ctx: TransferContext, sink: DownloadSink, partSize: number): boolean {
  return sink.waitForRoom === undefined && partSize > 2 * SLICE_BYTES && 2 * SLICE_BYTES <= ctx.memory.limit;
}

/** Queues one range fetched into two slice buffers and written slice by slice (its request slot is held until the last is written). */
async function fetchInSlices(run: Run, range: ByteRange, index: number, etag: string): Promise<void> {
  const { ctx, ref, sink, signal, group } = run;
  // Both slices in one piece of the budget: two separate takes could deadlock against other downloads holding one each.
  const memory = await acquirePartBuffer(ctx, 2 * SLICE_BYTES, signal);
  const buffers = [memory.subarray(0, SLICE_BYTES), memory.subarray(SLICE_BYTES)] as const;
  // The stored checksum (if any) is taken over the slices in order.
  let checksum: Promise<RangeStream | undefined> | undefined;
  const checksumStream = (): Promise<RangeStream | undefined> => (checksum ??= run.verifier.then((verifier) => verifier?.streamRange(range.offset)));
  const slices = new RangeSlices(buffers, range.offset, async (offset, data) => {
    await (await checksumStream())?.add(data);
    await sink.write(index, offset, data);
  });
  const end = range.offset + range.length - 1;
  const task = async (): Promise<void> => {
    await fetchRange(ctx, ref, range.offset, end, etag || undefined, memory, signal, false, slices);
    await slices.finish();
    (await checksumStream())?.end();
  };
  group.add(
    queued(ctx, signal, task).finally(async () => {
      await slices.settled();
      ctx.memory.release(memory);
    }),
  );
}

/**
 * A sink that writes parts as they come (a file) keeps the request slot
 * until the part is written: otherwise, whenever the disk is slower than the
 * network, finished parts queue for the disk while new fetches take fresh
 * part buffers, up to --max-memory (400+ MiB for 1 GiB), and every new buffer
 * is paid in page faults (~100k per GiB here, ~2 CPU-s in this VM). An
 * in-order sink (stdout) waits for earlier parts in `write`, so there the
 * slot is freed when the fetch ends.
 */
function holdSlotThroughWrite(sink: DownloadSink): boolean {
  return sink.waitForRoom === undefined;
}
