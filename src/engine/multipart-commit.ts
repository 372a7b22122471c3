import { createHash } from "node:crypto";
import { describeFailure } from "../s3/errors.js";
import type { InProgressUpload } from "../s3/list.js";
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  headObject,
  listParts,
  type ChecksumType,
  type ChecksumValue,
  type CompletedPart,
  type MultipartChecksum,
  type ObjectAttributes,
  type ObjectRef,
} from "../s3/operations.js";
import type { TransferContext } from "./context.js";
import { RequestError, withRetries, type RetryHooks } from "./retry.js";
import { inProgressUploads } from "./uploads.js";
import { s3Url } from "./object-url.js";

/**
 * The two ends of a multipart upload when an answer is lost: a request S3
 * carried out whose response never arrived is retried, and the retry meets
 * the first attempt's effect.
 *  - CreateMultipartUpload retried: the first attempt may have created an
 *    upload nobody knows the ID of. It is found and aborted.
 *  - CompleteMultipartUpload retried: the first attempt may have completed
 *    the upload, so the retry gets NoSuchUpload. The object is then checked
 *    (HEAD) against the parts sent and accepted if it is theirs.
 */

/** How far apart the client's elapsed time and the server's Initiated stamps may drift (clock resolution, queueing). */
const INITIATED_SLACK_MS = 2_000;

/** CreateMultipartUpload with retries; uploads that lost attempts left behind are aborted. */
export async function createUpload(
  ctx: TransferContext,
  dest: ObjectRef,
  attributes: ObjectAttributes,
  checksum: MultipartChecksum | undefined,
  hooks: RetryHooks,
): Promise<string> {
  const began = Date.now();
  let attempts = 0;
  const uploadId = await withRetries(`CreateMultipartUpload ${s3Url(dest)}`, ctx.retry, (n, routing) => {
    attempts = n + 1;
    ctx.stats.requests++;
    return createMultipartUpload(ctx.s3, dest, attributes, { signal: hooks.signal, routing, checksum });
  }, hooks);
  if (attempts > 1) await abortLostCreations(ctx, dest, uploadId, Date.now() - began);
  return uploadId;
}

/**
 * After a retried Create: other uploads of this key that S3 initiated while
 * this run was creating its own (by the server's clock: within `elapsedMs`
 * before the kept upload's Initiated) and that hold no part yet are the ones
 * a lost answer left behind: aborted. S3 shows nothing else that ties an
 * upload to its creator (no metadata in listings), so another client's upload
 * of the same key, created in those same seconds and with no part yet, is the
 * one case this cannot tell apart; a part-holding upload is never touched.
 */
async function abortLostCreations(ctx: TransferContext, dest: ObjectRef, kept: string, elapsedMs: number): Promise<void> {
  const uploads: InProgressUpload[] = [];
  for await (const u of inProgressUploads(ctx, dest.bucket, dest.key)) if (u.key === dest.key) uploads.push(u);
  const ours = uploads.find((u) => u.uploadId === kept)?.initiated?.getTime();
  if (ours === undefined) return;
  for (const u of uploads) {
    const initiated = u.initiated?.getTime();
    if (u.uploadId === kept || initiated === undefined) continue;
    if (initiated < ours - elapsedMs - INITIATED_SLACK_MS || initiated > ours + INITIATED_SLACK_MS) continue;
    const parts = await listParts(ctx.s3, dest, u.uploadId, { signal: ctx.signal }).catch(() => undefined);
    if (!parts || parts.length > 0) continue;
    ctx.notify(`aborted upload ${u.uploadId} of ${s3Url(dest)}: a CreateMultipartUpload whose answer was lost made it`);
    await abortQuietly(ctx, dest, u.uploadId);
  }
}

/**
 * The ETag S3 gives an object completed from these parts: the MD5 of the
 * parts' binary MD5s, "-N". Undefined when a part's ETag is not an MD5
 * (SSE-KMS, SSE-C, some S3-compatible stores): then it cannot be predicted.
 */
export function multipartEtag(parts: readonly CompletedPart[]): string | undefined {
  const sorted = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  const hash = createHash("md5");
  for (const p of sorted) {
    const hex = p.etag.replace(/"/g, "");
    if (!/^[0-9a-f]{32}$/i.test(hex)) return undefined;
    hash.update(Buffer.from(hex, "hex"));
  }
  return `${hash.digest("hex")}-${sorted.length}`;
}

/** The upload was gone when Complete was retried and the object is not (provably) the one these parts make. */
export class LostCompletionError extends Error {
  readonly code = "S3X_COMPLETE_UNCONFIRMED";
}

/**
 * CompleteMultipartUpload with retries. A retry answered NoSuchUpload means
 * an earlier attempt may have completed the upload with its answer lost
 * (many servers, radosgw among them, answer so): the object is accepted if
 * its ETag is the one these parts make and its size theirs, else this fails
 * clearly (another writer may have replaced it since). With
 * `mayDropChecksums` (the checksums are s3x's default, not asked for), a
 * Complete refused for its form (MalformedXML, InvalidRequest,
 * InvalidArgument, 501) while it carries checksums is sent once more
 * without them.
 */
export async function completeUpload(
  ctx: TransferContext,
  dest: ObjectRef,
  uploadId: string,
  parts: readonly CompletedPart[],
  size: number,
  call: CompleteChecksums & { mayDropChecksums?: boolean },
  hooks: RetryHooks,
): Promise<void> {
  try {
    await completeWithRetries(ctx, dest, uploadId, parts, size, call, hooks);
  } catch (err) {
    const carriesChecksums = call.fullObjectChecksum !== undefined || call.checksumType !== undefined || parts.some((p) => p.checksum);
    if (!call.mayDropChecksums || !carriesChecksums || !refusesRequestFormat(err)) throw err;
    // A server that ignores x-amz-checksum-* may refuse the elements that
    // name them: a resumed upload that sent no part never learnt it ignores
    // them. The parts' ETags still say which bytes to join.
    ctx.debug?.(`CompleteMultipartUpload ${s3Url(dest)}: the server refused it with checksums (${describeFailure(err instanceof RequestError ? err.cause : err).code}): completing without them`);
    await completeWithRetries(ctx, dest, uploadId, parts.map((p) => ({ partNumber: p.partNumber, etag: p.etag })), size, {}, hooks);
  }
}

interface CompleteChecksums {
  fullObjectChecksum?: ChecksumValue;
  checksumType?: ChecksumType;
}

/** The answers that refuse a request's form rather than its content: another form may pass. */
const REQUEST_FORMAT_CODES = new Set(["MalformedXML", "InvalidRequest", "InvalidArgument", "NotImplemented"]);

function refusesRequestFormat(err: unknown): boolean {
  const failure = err instanceof RequestError ? err.failure : describeFailure(err);
  return failure.status === 501 || (failure.code !== undefined && REQUEST_FORMAT_CODES.has(failure.code));
}

async function completeWithRetries(
  ctx: TransferContext,
  dest: ObjectRef,
  uploadId: string,
  parts: readonly CompletedPart[],
  size: number,
  call: CompleteChecksums,
  hooks: RetryHooks,
): Promise<void> {
  const outcome = await withRetries(`CompleteMultipartUpload ${s3Url(dest)}`, ctx.retry, async (n, routing) => {
    ctx.stats.requests++;
    try {
      await completeMultipartUpload(ctx.s3, dest, uploadId, [...parts], { signal: hooks.signal, routing, fullObjectChecksum: call.fullObjectChecksum, checksumType: call.checksumType });
      return "completed" as const;
    } catch (err) {
      if (n > 0 && describeFailure(err).code === "NoSuchUpload") return "gone" as const;
      throw err;
    }
  }, hooks);
  if (outcome === "gone") await confirmCompleted(ctx, dest, parts, size, hooks);
}

async function confirmCompleted(ctx: TransferContext, dest: ObjectRef, parts: readonly CompletedPart[], size: number, hooks: RetryHooks): Promise<void> {
  const expected = multipartEtag(parts);
  const lost = `CompleteMultipartUpload ${s3Url(dest)}: the answer to a first attempt was lost and the upload is gone`;
  if (!expected) throw new LostCompletionError(`${lost}; its parts' ETags are not MD5s, so the object there cannot be checked against them: check it before relying on it`);
  const info = await withRetries(`HEAD ${s3Url(dest)}`, ctx.retry, (_n, routing) => {
    ctx.stats.requests++;
    return headObject(ctx.s3, dest, { signal: hooks.signal, routing });
  }, hooks).catch(() => undefined);
  const found = info?.etag.replace(/"/g, "");
  if (info && found === expected && info.size === size) return;
  throw new LostCompletionError(`${lost}, and ${info ? `the object there (ETag ${found}) is not the one these parts make (${expected})` : "there is no object"}: another writer may have replaced it`);
}

/** Best effort, a few attempts, never masking the original error. */
export async function abortQuietly(ctx: TransferContext, dest: ObjectRef, uploadId: string): Promise<void> {
  await withRetries(`AbortMultipartUpload ${s3Url(dest)}`, { ...ctx.retry, maxAttempts: 3 }, (_n, routing) => abortMultipartUpload(ctx.s3, dest, uploadId, { routing })).catch(() => undefined);
}
