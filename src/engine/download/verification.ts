import { createHash } from "node:crypto";
import type { ByteRange } from "../../plan/ranges.js";
import type { ObjectInfo, ObjectRef, RangeResult } from "../../s3/operations.js";
import { queued } from "../context.js";
import { compositeParts, RangeVerifier, type StoredChecksum } from "../integrity/verifier.js";
import { headWithRetries } from "./range-fetch.js";
import type { DownloadOptions, Run } from "./run.js";
import { s3Url } from "../object-url.js";

/**
 * A download's verification policy: which stored checksum (or MD5 ETag) the
 * bytes are checked against, and the check before the file gets its final name.
 */

/** The downloaded bytes do not match the checksum S3 stored (or the MD5 ETag). */
export class ChecksumMismatchError extends Error {
  readonly code = "S3X_CHECKSUM_MISMATCH";
}

/** A running MD5 of the object's bytes, when it can be had without reading them back. */
export interface Md5Digest {
  hex(): string;
}

/**
 * With --verify-etag and an MD5 ETag: MD5 is a running hash, so a one-range
 * object is hashed now and a bigger one in order as a stream sink writes it;
 * undefined when the bytes must be read back from a file at the end (or
 * there is nothing to check).
 */
export function etagMd5(run: Run, first: RangeResult, firstData: Buffer, size: number, options: DownloadOptions): Md5Digest | undefined {
  if (!options.verifyEtag || !isMd5Etag(first.etag)) return undefined;
  if (first.bytes === size) {
    const hex = createHash("md5").update(firstData).digest("hex");
    return { hex: () => hex };
  }
  const { sink } = run;
  if (sink.observeInOrder && !sink.read) {
    const running = createHash("md5");
    sink.observeInOrder((data) => running.update(data));
    return { hex: () => running.digest("hex") };
  }
  return undefined;
}

/**
 * What the bytes will be checked against: the checksum the first response
 * carried (S3 returns one only for whole-object reads), else the one a HEAD
 * with x-amz-checksum-mode returns, pinned to the ETag. Servers that store no
 * checksums (radosgw) give nothing to check. The HEAD is urgent: ranges
 * written in slices wait for the verifier while their GETs hold the pacer's
 * slots, so under a throttle a HEAD made to wait for a slot hung the
 * download for ever (issue #35).
 */
export function verifierFor(run: Run, first: RangeResult, size: number): Promise<RangeVerifier | undefined> {
  const { ctx, ref, signal } = run;
  const info = first.checksum || first.bytes === size
    ? Promise.resolve<Pick<ObjectInfo, "checksum" | "checksumType">>(first)
    : headWithRetries(ctx, ref, signal, { ifMatch: first.etag, urgent: true });
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
export async function storedChecksum(run: Run, info: Pick<ObjectInfo, "checksum" | "checksumType">, size: number, etag: string): Promise<StoredChecksum | undefined> {
  const { checksum, checksumType } = info;
  if (!checksum) return undefined;
  if (checksumType !== "COMPOSITE") return { type: "FULL_OBJECT", checksum };
  const parts = compositeParts(checksum.base64);
  if (parts === undefined) return undefined;
  const { ctx, ref, signal } = run;
  const first = await headWithRetries(ctx, ref, signal, { ifMatch: etag, partNumber: 1, urgent: true });
  const partSize = first.size;
  if (!(partSize > 0 && partSize * (parts - 1) < size && size <= partSize * parts)) return undefined;
  return { type: "COMPOSITE", checksum, partSize, parts };
}

/** Takes a landed range's checksum when there is a stored one to check. */
export async function recordDigest(run: Run, offset: number, data: Buffer): Promise<void> {
  const verifier = await run.verifier;
  if (verifier) await verifier.add(offset, data);
}

/**
 * Before the final name: the checksum of every range (those an earlier run
 * wrote are read back from the file) against the stored one, and with
 * --verify-etag the MD5 of a single-part object against its ETag.
 */
export async function verify(run: Run, size: number, earlier: readonly ByteRange[], etag: string, options: DownloadOptions, md5: Md5Digest | undefined): Promise<void> {
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
        ctx.notify(`${s3Url(ref)}: its COMPOSITE ${stored.checksum.algorithm} checksum could not be checked (its parts differ in size)`);
      } else {
        throw new ChecksumMismatchError(
          `${s3Url(ref)}: checksum mismatch: the ${stored.checksum.algorithm} of the downloaded bytes is ${verdict.actual}, S3 stored ${stored.checksum.base64}`,
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
  if (actual !== expected) throw new ChecksumMismatchError(`${s3Url(ref)}: checksum mismatch: the MD5 of the downloaded bytes is ${actual}, the ETag says ${expected}`);
}
