import { getRange, headObject, type ObjectInfo, type ObjectRef, type RangeResult } from "../../s3/operations.js";
import { retryHooks, type TransferContext } from "../context.js";
import { rangeHedge } from "../hedge.js";
import type { RangeSlices } from "../range-slices.js";
import { withRetries } from "../retry.js";
import { s3Url } from "../object-url.js";

/**
 * The part requests of a download: one ranged GET (or HEAD), with retries,
 * counted in the command's stats. Scheduling (the queue slot) and buffers are
 * the caller's.
 */

/**
 * HEAD of the object (or one part), with retries, counted; `ifMatch` pins
 * the version; `urgent` when requests in flight wait for it (RetryHooks.urgent).
 */
export function headWithRetries(
  ctx: TransferContext,
  ref: ObjectRef,
  signal: AbortSignal,
  call: { ifMatch?: string; partNumber?: number; urgent?: boolean } = {},
): Promise<ObjectInfo> {
  const what = call.partNumber === undefined ? "" : ` part ${call.partNumber}`;
  return withRetries(`HEAD ${s3Url(ref)}${what}`, ctx.retry, (_n, routing) => {
    ctx.stats.requests++;
    return headObject(ctx.s3, ref, { signal, routing, ifMatch: call.ifMatch || undefined, partNumber: call.partNumber });
  }, { ...retryHooks(ctx, signal), urgent: call.urgent });
}

/**
 * GET bytes [start, end] into `buffer`, retrying; a retry asks only for the
 * bytes the previous attempts did not deliver, so progress stays honest and
 * no byte is fetched twice.
 */
export function fetchRange(
  ctx: TransferContext,
  ref: ObjectRef,
  start: number,
  end: number,
  ifMatch: string | undefined,
  buffer: Buffer,
  signal: AbortSignal,
  whole = false,
  slices?: RangeSlices,
): Promise<RangeResult> {
  let received = 0;
  let etag = ifMatch;
  return withRetries(
    `GET ${s3Url(ref)} bytes=${start}-${end}`,
    ctx.retry,
    async (_n, routing) => {
      ctx.stats.requests++;
      const result = await getRange(ctx.s3, {
        ref,
        start: start + received,
        end,
        ifMatch: etag,
        target: buffer,
        offset: received,
        slices,
        signal,
        routing,
        whole,
        onBytes: (n) => {
          slices?.advance(n);
          received += n;
          ctx.stats.bytesReceived += n;
          ctx.progress.addDone(n);
        },
        // Pin the version from the first response on: a retry that resumes
        // mid-range must get bytes of the same object.
        onEtag: (seen) => (etag ??= seen || undefined),
      });
      return { ...result, bytes: received };
    },
    retryHooks(ctx, signal),
    // Fan-out hook (engine/hedge.ts): at the transfer's tail a straggling
    // range may get a duplicate elsewhere, written to a scratch buffer and
    // copied in only if it wins.
    rangeHedge<RangeResult>(ctx.hedger, ctx.memory, {
      length: end - start + 1,
      received: () => received,
      fetch: (from, scratch, onBytes, routing) => {
        ctx.stats.requests++;
        return getRange(ctx.s3, { ref, start: start + from, end, ifMatch: etag, target: scratch, offset: 0, signal, routing, onBytes });
      },
      adopted: (result, rest) => {
        if (etag && result.etag && result.etag !== etag) throw new Error(`GET s3://${ref.bucket}/${ref.key}: the object changed during the download (ETag ${etag}, then ${result.etag})`);
        if (slices) slices.appendTail(rest);
        else rest.copy(buffer, received);
        const bytes = rest.length;
        received += bytes;
        ctx.stats.bytesReceived += bytes;
        ctx.progress.addDone(bytes);
        return { ...result, bytes: received };
      },
    }),
  );
}
