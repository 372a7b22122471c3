import { createHash } from "node:crypto";
import { partAt, planParts } from "../plan/parts.js";
import { coveredBytes, missingRanges, type ByteRange } from "../plan/ranges.js";
import { getRange, headObject, ObjectLargerThanBufferError, type ObjectInfo, type ObjectRef, type RangeResult } from "../s3/operations.js";
import { acquirePartBuffer, ObjectScope, queued, retryHooks, type TransferContext } from "./context.js";
import { compositeParts, RangeVerifier, type RangeStream, type StoredChecksum } from "./integrity/verifier.js";
import { RangeSlices, SLICE_BYTES } from "./range-slices.js";
import { isInterruption } from "./resume/interruption.js";
import { RequestError, withRetries } from "./retry.js";
import { rangeHedge } from "./hedge.js";
import type { DownloadSink, PartialDownload } from "./sinks/download-sink.js";
import { TaskGroup } from "./task-group.js";

export interface DownloadResult {
  size: number;
  etag: string;
  lastModified?: Date;
}

export interface DownloadOptions {
  /** Continue an interrupted download from what its file sink kept, instead of starting over. */
  resume?: boolean;
  /** Check a single-part object's bytes against its MD5 ETag. */
  verifyEtag?: boolean;
}

/** The downloaded bytes do not match the checksum S3 stored (or the MD5 ETag). */
export class ChecksumMismatchError extends Error {
  readonly code = "S3X_CHECKSUM_MISMATCH";
}

function describe(ref: ObjectRef): string {
  return `s3://${ref.bucket}/${ref.key}`;
}

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

/** HEAD of the object (or one part), with retries, counted; `ifMatch` pins the version. */
function headWithRetries(ctx: TransferContext, ref: ObjectRef, signal: AbortSignal, call: { ifMatch?: string; partNumber?: number } = {}): Promise<ObjectInfo> {
  const what = call.partNumber === undefined ? "" : ` part ${call.partNumber}`;
  return withRetries(`HEAD ${describe(ref)}${what}`, ctx.retry, () => {
    ctx.stats.requests++;
    return headObject(ctx.client, ref, { signal, ifMatch: call.ifMatch || undefined, partNumber: call.partNumber });
  }, retryHooks(ctx, signal));
}

/** What one download run shares between its range fetches. */
interface Run {
  ctx: TransferContext;
  ref: ObjectRef;
  sink: DownloadSink;
  /** Cancels this object's requests; split once it takes more than one. */
  scope: ObjectScope;
  /** The scope's signal (read it where it is used: it changes on split). */
  readonly signal: AbortSignal;
  group: TaskGroup;
  /** Checks the bytes against the object's stored checksum, once that is known (undefined: nothing to check). */
  verifier: Promise<RangeVerifier | undefined>;
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
          `kept the partial download of ${describe(ref)} (${coveredBytes(partial.done)} of ${partial.identity.size} bytes in ${partial.location}): ` +
            `run the same command with --resume to finish it`,
        );
      }
    }
    throw failure;
  } finally {
    scope.dispose();
  }
}

/** An earlier interrupted download into this sink: returned to resume it, else reported and removed. */
async function previousDownload(ctx: TransferContext, ref: ObjectRef, sink: DownloadSink, options: DownloadOptions): Promise<PartialDownload | undefined> {
  const previous = sink.previous ? await sink.previous() : undefined;
  if (!previous) return undefined;
  if (options.resume && previous.identity.size >= 0) return previous;
  ctx.notify(
    `found an interrupted download of ${describe(ref)} (${coveredBytes(previous.done)} of ${previous.identity.size} bytes in ${previous.location}); ` +
      `starting over (add --resume to continue it instead)`,
  );
  await sink.forgetPrevious?.();
  return undefined;
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
  const firstBuffer = await ctx.memory.acquire(firstSize, signal);
  let first: RangeResult;
  try {
    first = await queued(ctx, signal, () => fetchRange(ctx, ref, 0, firstSize - 1, undefined, firstBuffer, signal, whole));
  } catch (err) {
    ctx.memory.release(firstBuffer);
    // A range on an empty object is unsatisfiable (416): confirm with HEAD.
    if (err instanceof RequestError && err.failure.status === 416) return await downloadEmpty(ctx, ref, sink, signal);
    // It grew since it was listed: start over as for an object of unknown size.
    if (err instanceof RequestError && err.cause instanceof ObjectLargerThanBufferError) {
      return await freshDownload(run, partSize, undefined, options);
    }
    throw err;
  }
  if (!first.ranged && first.objectSize > firstSize) {
    ctx.memory.release(firstBuffer);
    throw new Error(`GET ${describe(ref)}: the server ignored the Range header`);
  }
  const size = first.objectSize;
  if (first.bytes < size) run.scope.split();
  ctx.progress.addTotal(size);
  ctx.progress.addDone(0);
  run.verifier = verifierFor(run, first, size);
  // One response held it all: nothing to resume, so no journal (a file less to create per small object).
  await sink.open(size, { etag: first.etag, size }, first.bytes < size);
  const firstData = firstBuffer.subarray(0, first.bytes);
  // MD5 is a running hash: a one-range object is hashed now; a bigger one is
  // hashed in order as a stream sink writes it, or read back from a file at the end.
  let md5: { hex: () => string } | undefined;
  if (options.verifyEtag && isMd5Etag(first.etag)) {
    if (first.bytes === size) {
      const hex = createHash("md5").update(firstData).digest("hex");
      md5 = { hex: () => hex };
    } else if (sink.observeInOrder && !sink.read) {
      const running = createHash("md5");
      sink.observeInOrder((data) => running.update(data));
      md5 = { hex: () => running.digest("hex") };
    }
  }
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
 * Continues a download from the ranges an earlier run wrote: the first
 * missing range is fetched with If-Match on the recorded ETag, so a changed
 * object (412, or another size) starts the download over instead of mixing
 * versions. Returns undefined when it must start over.
 */
async function resumeDownload(run: Run, previous: PartialDownload, partSize: number, options: DownloadOptions): Promise<DownloadResult | undefined> {
  run.scope.split();
  const { ctx, ref, sink, signal } = run;
  const { etag, size } = previous.identity;
  const missing = missingRanges(previous.done, size, partSize);
  const have = size - missing.reduce((sum, r) => sum + r.length, 0);
  const startOver = (why: string): undefined => {
    ctx.notify(`cannot resume the download of ${describe(ref)}: ${why}; starting over`);
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
  ctx.notify(`resuming the download of ${describe(ref)}: ${have} of ${size} bytes already on disk`);
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

/** The range fetched alone (to learn the size, or to check the version) goes to the sink as part 0. */
function landFirst(run: Run, offset: number, data: Buffer, buffer: Buffer): void {
  run.group.add(
    recordDigest(run, offset, data)
      .then(() => run.sink.write(0, offset, data))
      .finally(() => run.ctx.memory.release(buffer)),
  );
}

/** Fetches `ranges` concurrently (sink index from `firstIndex`), writing each to the sink as it lands. */
async function fetchRanges(run: Run, ranges: readonly ByteRange[], firstIndex: number, etag: string, partSize: number): Promise<void> {
  const { ctx, ref, sink, signal, group } = run;
  const sliced = writesInSlices(ctx, sink, partSize);
  for (let i = 0; i < ranges.length && !group.failed; i++) {
    const index = firstIndex + i;
    const range = ranges[i]!;
    if (sliced) {
      await fetchInSlices(run, range, index, etag);
      continue;
    }
    if (sink.waitForRoom) await sink.waitForRoom(index);
    // Buffers are taken in part order, so the part the sink needs next
    // always holds one: an ordered sink can never deadlock the budget.
    const buffer = await acquirePartBuffer(ctx, partSize, signal);
    const end = range.offset + range.length - 1;
    const data = buffer.subarray(0, range.length);
    const fetch = (): Promise<RangeResult> => fetchRange(ctx, ref, range.offset, end, etag || undefined, buffer, signal);
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

/**
 * What the bytes will be checked against: the checksum the first response
 * carried (S3 returns one only for whole-object reads), else the one a HEAD
 * with x-amz-checksum-mode returns, pinned to the ETag. Servers that store no
 * checksums (radosgw) give nothing to check.
 */
function verifierFor(run: Run, first: RangeResult, size: number): Promise<RangeVerifier | undefined> {
  const { ctx, ref, signal } = run;
  const info = first.checksum || first.bytes === size
    ? Promise.resolve<Pick<ObjectInfo, "checksum" | "checksumType">>(first)
    : headWithRetries(ctx, ref, signal, { ifMatch: first.etag });
  const verifier = info.then((i) => storedChecksum(run, i, size, first.etag)).then((stored) => stored && new RangeVerifier(stored, size));
  // Awaited by every range before it is written; a failure fails the download there.
  verifier.catch(() => undefined);
  return verifier;
}

/**
 * The stored checksum in checkable form. A COMPOSITE value ("…-N") needs the
 * part boundaries: HEAD ?partNumber=1 gives the part size, and N parts of
 * that size (the last one shorter) must add up to the object.
 */
async function storedChecksum(run: Run, info: Pick<ObjectInfo, "checksum" | "checksumType">, size: number, etag: string): Promise<StoredChecksum | undefined> {
  const { checksum, checksumType } = info;
  if (!checksum) return undefined;
  if (checksumType !== "COMPOSITE") return { type: "FULL_OBJECT", checksum };
  const parts = compositeParts(checksum.base64);
  if (parts === undefined) return undefined;
  const { ctx, ref, signal } = run;
  const first = await headWithRetries(ctx, ref, signal, { ifMatch: etag, partNumber: 1 });
  const partSize = first.size;
  if (!(partSize > 0 && partSize * (parts - 1) < size && size <= partSize * parts)) return undefined;
  return { type: "COMPOSITE", checksum, partSize, parts };
}

/** Takes a landed range's checksum when there is a stored one to check. */
async function recordDigest(run: Run, offset: number, data: Buffer): Promise<void> {
  const verifier = await run.verifier;
  if (verifier) await verifier.add(offset, data);
}

/**
 * Before the final name: the checksum of every range (those an earlier run
 * wrote are read back from the file) against the stored one, and with
 * --verify-etag the MD5 of a single-part object against its ETag.
 */
async function verify(run: Run, size: number, earlier: readonly ByteRange[], etag: string, options: DownloadOptions, md5: { hex: () => string } | undefined): Promise<void> {
  const { ctx, ref, sink, signal } = run;
  const verifier = await run.verifier;
  let verified = false;
  if (verifier) {
    for (const range of earlier) {
      if (!sink.read) break;
      const buffer = await ctx.memory.acquire(range.length, signal);
      try {
        await sink.read(range.offset, buffer.subarray(0, range.length));
        await verifier.add(range.offset, buffer.subarray(0, range.length));
      } finally {
        ctx.memory.release(buffer);
      }
    }
    const verdict = await verifier.verdict();
    if (verdict.ok === false) {
      const { stored } = verifier;
      if (stored.type === "COMPOSITE" && !(await partsAreUniform(run, stored, size, etag))) {
        ctx.notify(`${describe(ref)}: its COMPOSITE ${stored.checksum.algorithm} checksum could not be checked (its parts differ in size)`);
      } else {
        throw new ChecksumMismatchError(
          `${describe(ref)}: checksum mismatch: the ${stored.checksum.algorithm} of the downloaded bytes is ${verdict.actual}, S3 stored ${stored.checksum.base64}`,
        );
      }
    } else if (verdict.ok === true) {
      verified = true;
    }
  }
  if (options.verifyEtag && isMd5Etag(etag)) {
    if (md5 !== undefined) compareMd5(ref, etag, md5.hex());
    else if (sink.read) await md5CheckFromSink(run, etag, size);
    verified ||= md5 !== undefined || sink.read !== undefined;
  }
  if (verified) ctx.stats.verifiedObjects++;
}

/**
 * Before calling a COMPOSITE mismatch corruption: were the parts really all
 * of the first part's size? (S3 allows parts of different sizes; then the
 * boundaries assumed were wrong, not the bytes.) One HEAD per part, only on
 * this rare path.
 */
async function partsAreUniform(run: Run, stored: Extract<StoredChecksum, { type: "COMPOSITE" }>, size: number, etag: string): Promise<boolean> {
  const { ctx, ref, signal } = run;
  const sizes = await Promise.all(
    Array.from({ length: stored.parts - 1 }, (_, i) =>
      queued(ctx, signal, () => headWithRetries(ctx, ref, signal, { ifMatch: etag, partNumber: i + 2 })),
    ),
  );
  return sizes.every((info, i) => info.size === (i + 2 === stored.parts ? size - stored.partSize * (stored.parts - 1) : stored.partSize));
}

function isMd5Etag(etag: string): boolean {
  return /^"?[0-9a-f]{32}"?$/i.test(etag);
}

/** MD5 is a running hash: read the finished file back in order. */
async function md5CheckFromSink(run: Run, etag: string, size: number): Promise<void> {
  const { ctx, sink, signal } = run;
  const chunk = Math.min(size, 8 * 1024 * 1024);
  const hash = createHash("md5");
  if (size > 0) {
    const buffer = await ctx.memory.acquire(chunk, signal);
    try {
      for (let offset = 0; offset < size; offset += chunk) {
        const view = buffer.subarray(0, Math.min(chunk, size - offset));
        await sink.read!(offset, view);
        hash.update(view);
      }
    } finally {
      ctx.memory.release(buffer);
    }
  }
  compareMd5(run.ref, etag, hash.digest("hex"));
}

function compareMd5(ref: ObjectRef, etag: string, actual: string): void {
  const expected = etag.replace(/"/g, "").toLowerCase();
  if (actual !== expected) throw new ChecksumMismatchError(`${describe(ref)}: checksum mismatch: the MD5 of the downloaded bytes is ${actual}, the ETag says ${expected}`);
}

async function downloadEmpty(ctx: TransferContext, ref: ObjectRef, sink: DownloadSink, signal: AbortSignal): Promise<DownloadResult> {
  const info = await headWithRetries(ctx, ref, signal);
  if (info.size !== 0) throw new Error(`GET ${describe(ref)}: range not satisfiable for an object of ${info.size} bytes`);
  await sink.open(0, { etag: info.etag, size: 0 }, false);
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
  whole = false,
  slices?: RangeSlices,
): Promise<RangeResult> {
  let received = 0;
  let etag = ifMatch;
  return withRetries(
    `GET ${describe(ref)} bytes=${start}-${end}`,
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
        slices,
        signal,
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
      fetch: (from, scratch, onBytes) => {
        ctx.stats.requests++;
        return getRange(ctx.client, { ref, start: start + from, end, ifMatch: etag, target: scratch, offset: 0, signal, onBytes });
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
