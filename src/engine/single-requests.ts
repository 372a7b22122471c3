import { createBucket, deleteBucket } from "../s3/buckets.js";
import { listBuckets } from "../s3/list.js";
import { deleteObject } from "../s3/delete.js";
import { describeFailure } from "../s3/errors.js";
import { headObject, type ObjectRef } from "../s3/operations.js";
import { presignGet } from "../s3/presign.js";
import type { TransferContext } from "./context.js";
import { RequestError, withRetries } from "./retry.js";

export { MAX_PRESIGN_SECONDS } from "../s3/presign.js";

/**
 * The requests a command sends one at a time (mb, rb, ls of buckets, rm of
 * one key), each with the run's retries and cancelled with the run. The
 * requests of transfers and listings go through their own engine modules.
 */

export function makeBucket(ctx: TransferContext, bucket: string): Promise<{ region: string }> {
  return withRetries(`CreateBucket s3://${bucket}`, ctx.retry, (_n, routing) => createBucket(ctx.s3, bucket, { signal: ctx.signal, routing }), { signal: ctx.signal });
}

export function removeBucket(ctx: TransferContext, bucket: string): Promise<void> {
  return withRetries(`DeleteBucket s3://${bucket}`, ctx.retry, (_n, routing) => deleteBucket(ctx.s3, bucket, { signal: ctx.signal, routing }), { signal: ctx.signal });
}

export function bucketList(ctx: TransferContext): Promise<{ name: string; created?: Date }[]> {
  return withRetries("ListBuckets", ctx.retry, (_n, routing) => listBuckets(ctx.s3, { signal: ctx.signal, routing }), { signal: ctx.signal });
}

/** Deletes one object; `shown` names it in a failure's message as the user wrote it. */
export function removeObject(ctx: TransferContext, ref: ObjectRef, shown: string): Promise<void> {
  return withRetries(`DeleteObject ${shown}`, ctx.retry, (_n, routing) => deleteObject(ctx.s3, ref.bucket, ref.key, { signal: ctx.signal, routing }), { signal: ctx.signal });
}

/** Whether a key holds an object (a HEAD; a 404 says no). */
export async function objectExists(ctx: TransferContext, ref: ObjectRef, shown: string): Promise<boolean> {
  try {
    await withRetries(`HEAD ${shown}`, ctx.retry, (_n, routing) => headObject(ctx.s3, ref, { signal: ctx.signal, routing }), { signal: ctx.signal });
    return true;
  } catch (err) {
    const failure = err instanceof RequestError ? err.failure : describeFailure(err);
    if (failure.status === 404) return false;
    throw err;
  }
}

/** A presigned GET URL for an object, valid `seconds` (unsigned: its plain URL), signed for the bucket's region (s3/presign.ts). */
export function presignedGetUrl(ctx: TransferContext, ref: ObjectRef, seconds: number, signed = true): Promise<string> {
  return presignGet(ctx.s3, ref, seconds, Date.now(), signed);
}
