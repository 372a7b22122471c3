import { partAt, planParts } from "../plan/parts.js";
import { getRange, headObject, type ObjectRef, type RangeResult } from "../s3/operations.js";
import { acquirePartBuffer, childController, retryHooks, type TransferContext } from "./context.js";
import { RequestError, withRetries } from "./retry.js";
import type { DownloadSink } from "./sinks/download-sink.js";
import { TaskGroup } from "./task-group.js";

export interface DownloadResult {
  size: number;
  etag: string;
  lastModified?: Date;
}

/**
 * One object download (a "meta request" in aws-c-s3's terms): the first
 * ranged GET reveals the size and ETag, the other ranges are fetched
 * concurrently with If-Match on that ETag, so an object replaced mid-way
 * fails instead of mixing two versions. Parts go to the sink as they land.
 */
export async function downloadObject(ctx: TransferContext, ref: ObjectRef, sink: DownloadSink, partSize: number, sizeHint?: number): Promise<DownloadResult> {
  const { controller, dispose } = childController(ctx.signal);
  const signal = controller.signal;
  const group = new TaskGroup(controller);
  try {
    // A listing already told the size: a small object needs a small buffer.
    const firstSize = sizeHint !== undefined && sizeHint > 0 ? Math.min(partSize, sizeHint) : partSize;
    if (sizeHint === 0) return await downloadEmpty(ctx, ref, sink, signal);
    const firstBuffer = await ctx.memory.acquire(firstSize, signal);
    let first: RangeResult;
    try {
      first = await ctx.queue.add(() => fetchRange(ctx, ref, 0, firstSize - 1, undefined, firstBuffer, signal), { signal });
    } catch (err) {
      ctx.memory.release(firstBuffer);
      // A range on an empty object is unsatisfiable (416): confirm with HEAD.
      if (err instanceof RequestError && err.failure.status === 416) return await downloadEmpty(ctx, ref, sink, signal);
      throw err;
    }
    if (!first.ranged && first.objectSize > firstSize) {
      ctx.memory.release(firstBuffer);
      throw new Error(`GET s3://${ref.bucket}/${ref.key}: the server ignored the Range header`);
    }
    const size = first.objectSize;
    ctx.progress.addTotal(size);
    ctx.progress.addDone(0);
    await sink.open(size);
    group.add(sink.write(0, 0, firstBuffer.subarray(0, first.bytes)).finally(() => ctx.memory.release(firstBuffer)));

    // The rest of the object, after the first response, in part-size ranges.
    const rest = planParts(size - first.bytes, partSize);
    for (let i = 1; i <= rest.count && !group.failed; i++) {
      const tail = partAt(rest, i - 1);
      const part = { offset: first.bytes + tail.offset, length: tail.length };
      if (sink.waitForRoom) await sink.waitForRoom(i);
      // Buffers are taken in part order, so the part the sink needs next
      // always holds one: an ordered sink can never deadlock the budget.
      const buffer = await acquirePartBuffer(ctx, partSize, signal);
      const end = part.offset + part.length - 1;
      const write = (): Promise<void> => sink.write(i, part.offset, buffer.subarray(0, part.length));
      group.add(
        (holdSlotThroughWrite(sink)
          ? ctx.queue.add(() => fetchRange(ctx, ref, part.offset, end, first.etag || undefined, buffer, signal).then(write), { signal })
          : ctx.queue.add(() => fetchRange(ctx, ref, part.offset, end, first.etag || undefined, buffer, signal), { signal }).then(write)
        ).finally(() => ctx.memory.release(buffer)),
      );
    }
    await group.wait();
    await sink.commit({ lastModified: first.lastModified });
    return { size, etag: first.etag, lastModified: first.lastModified };
  } catch (err) {
    controller.abort(err);
    await group.settle();
    await sink.discard();
    throw group.firstError ?? err;
  } finally {
    dispose();
  }
}

/**
 * [perf hook] A sink that writes parts as they come (a file) keeps the
 * request slot until the part is written: otherwise, whenever the disk is
 * slower than the network, finished parts queue for the disk while new
 * fetches take fresh part buffers, up to --max-memory (400+ MiB for 1 GiB),
 * and every new buffer is paid in page faults (~100k per GiB here, ~2 CPU-s
 * in this VM). An in-order sink (stdout) waits for earlier parts in `write`,
 * so there the slot is freed when the fetch ends, as before.
 */
function holdSlotThroughWrite(sink: DownloadSink): boolean {
  return sink.waitForRoom === undefined;
}

async function downloadEmpty(ctx: TransferContext, ref: ObjectRef, sink: DownloadSink, signal: AbortSignal): Promise<DownloadResult> {
  const info = await withRetries(`HEAD s3://${ref.bucket}/${ref.key}`, ctx.retry, () => headObject(ctx.client, ref, { signal }), { signal });
  if (info.size !== 0) throw new Error(`GET s3://${ref.bucket}/${ref.key}: range not satisfiable for an object of ${info.size} bytes`);
  await sink.open(0);
  await sink.commit({ lastModified: info.lastModified });
  return { size: 0, etag: info.etag, lastModified: info.lastModified };
}

/**
 * GET bytes [start, end] into `buffer`, retrying; a retry asks only for the
 * bytes the previous attempts did not deliver, so progress stays honest and
 * no byte is fetched twice.
 */
function fetchRange(
  ctx: TransferContext,
  ref: ObjectRef,
  start: number,
  end: number,
  ifMatch: string | undefined,
  buffer: Buffer,
  signal: AbortSignal,
): Promise<RangeResult> {
  let received = 0;
  let etag = ifMatch;
  return withRetries(
    `GET s3://${ref.bucket}/${ref.key} bytes=${start}-${end}`,
    ctx.retry,
    async () => {
      ctx.stats.requests++;
      const result = await getRange(ctx.client, {
        ref,
        start: start + received,
        end,
        ifMatch: etag,
        target: buffer,
        offset: received,
        signal,
        onBytes: (n) => {
          received += n;
          ctx.progress.addDone(n);
        },
        // Pin the version from the first response on: a retry that resumes
        // mid-range must get bytes of the same object.
        onEtag: (seen) => (etag ??= seen || undefined),
      });
      return { ...result, bytes: received };
    },
    retryHooks(ctx, signal),
  );
}
