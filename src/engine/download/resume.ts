import { coveredBytes, missingRanges, type ByteRange } from "../../plan/ranges.js";
import type { ObjectRef, RangeResult } from "../../s3/operations.js";
import { queued, type TransferContext } from "../context.js";
import { RangeVerifier } from "../integrity/verifier.js";
import { RequestError } from "../retry.js";
import type { DownloadSink, PartialDownload } from "../sinks/download-sink.js";
import { fetchRanges, landFirst } from "./parts.js";
import { fetchRange, headWithRetries } from "./range-fetch.js";
import type { DownloadOptions, DownloadResult, Run } from "./run.js";
import { storedChecksum, verifierFor, verify } from "./verification.js";
import { s3Url } from "../object-url.js";

/** An earlier interrupted download into this sink: returned to resume it, else reported and removed. */
export async function previousDownload(ctx: TransferContext, ref: ObjectRef, sink: DownloadSink, options: DownloadOptions): Promise<PartialDownload | undefined> {
  const previous = sink.previous ? await sink.previous() : undefined;
  if (!previous) return undefined;
  if (options.resume && previous.identity.size >= 0) return previous;
  ctx.notify(
    `found an interrupted download of ${s3Url(ref)} (${coveredBytes(previous.done)} of ${previous.identity.size} bytes in ${previous.location}); ` +
      `starting over (add --resume to continue it instead)`,
  );
  await sink.forgetPrevious?.();
  return undefined;
}

/**
 * Continues a download from the ranges an earlier run wrote: the first
 * missing range is fetched with If-Match on the recorded ETag, so a changed
 * object (412, or another size) starts the download over instead of mixing
 * versions. Returns undefined when it must start over.
 */
export async function resumeDownload(run: Run, previous: PartialDownload, partSize: number, options: DownloadOptions): Promise<DownloadResult | undefined> {
  run.scope.split();
  const { ctx, ref, sink, signal } = run;
  const { etag, size } = previous.identity;
  const missing = missingRanges(previous.done, size, partSize);
  const have = size - missing.reduce((sum, r) => sum + r.length, 0);
  const startOver = (why: string): undefined => {
    ctx.notify(`cannot resume the download of ${s3Url(ref)}: ${why}; starting over`);
    return undefined;
  };
  let lastModified: Date | undefined;
  let first: { range: ByteRange; buffer: Buffer } | undefined;
  if (missing.length === 0) {
    // Every byte is on disk (killed just before the rename): confirm it is still that object.
    const info = await headWithRetries(ctx, ref, signal);
    if (info.etag !== etag || info.size !== size) return startOver("the object changed since");
    lastModified = info.lastModified;
    run.verifier = storedChecksum(run, info, size, etag).then((stored) => stored && new RangeVerifier(stored, size));
  } else {
    const range = missing[0]!;
    const buffer = await ctx.memory.acquire(range.length, signal);
    let result: RangeResult;
    try {
      result = await queued(ctx, signal, () => fetchRange(ctx, ref, range.offset, range.offset + range.length - 1, etag || undefined, buffer, signal));
    } catch (err) {
      ctx.memory.release(buffer);
      if (err instanceof RequestError && err.failure.status === 412) return startOver("the object changed since");
      throw err;
    }
    if (result.objectSize !== size) {
      ctx.memory.release(buffer);
      return startOver("the object changed size since");
    }
    lastModified = result.lastModified;
    run.verifier = verifierFor(run, result, size);
    first = { range, buffer };
  }
  ctx.notify(`resuming the download of ${s3Url(ref)}: ${have} of ${size} bytes already on disk`);
  ctx.stats.reusedParts += previous.done.length;
  ctx.stats.reusedBytes += have;
  ctx.progress.addTotal(size);
  ctx.progress.addDone(have - (first ? first.range.length : 0));
  await sink.reopen!();
  if (first) landFirst(run, first.range.offset, first.buffer.subarray(0, first.range.length), first.buffer);
  await fetchRanges(run, missing.slice(1), 1, etag, partSize);
  await run.group.wait();
  await verify(run, size, previous.done, etag, options, undefined);
  await sink.commit({ lastModified });
  return { size, etag, lastModified };
}
