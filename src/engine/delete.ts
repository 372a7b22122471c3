import { deleteObject, deleteObjects } from "../s3/delete.js";
import { queued, type TransferContext } from "./context.js";
import type { ObjectResult } from "./batch.js";
import { listObjectPages } from "./listing.js";
import { withRetries } from "./retry.js";

const DELETE_BATCH = 1000;

/**
 * Deletes keys with DeleteObjects, 1,000 per request (S3's maximum), the
 * requests sent concurrently through the shared queue. Every key gets its
 * own result, so one refused key is reported without hiding the others.
 */
export async function deleteKeys(ctx: TransferContext, bucket: string, keys: readonly string[], onResult: (result: ObjectResult) => void): Promise<void> {
  const batches: Promise<void>[] = [];
  for (let i = 0; i < keys.length; i += DELETE_BATCH) {
    const chunk = keys.slice(i, i + DELETE_BATCH);
    const send = async (): Promise<void> => {
      try {
        const failures = await withRetries(`DeleteObjects s3://${bucket} (${chunk.length} keys)`, ctx.retry, (_n, routing) => {
          ctx.stats.requests++;
          return deleteObjects(ctx.s3, bucket, chunk, { signal: ctx.signal, routing });
        }, { signal: ctx.signal });
        const failed = new Map(failures.map((f) => [f.key, f]));
        for (const key of chunk) {
          const f = failed.get(key);
          onResult({ action: "delete", source: `s3://${bucket}/${key}`, destination: "", size: 0, status: f ? "failed" : "ok", error: f ? new Error(`${f.code}: ${f.message}`) : undefined });
        }
      } catch (error) {
        for (const key of chunk) onResult({ action: "delete", source: `s3://${bucket}/${key}`, destination: "", size: 0, status: "failed", error });
      }
    };
    batches.push(queued(ctx, ctx.signal, send).catch(() => undefined));
  }
  await Promise.all(batches);
}

/**
 * Deletes every object under `prefix` that `selected` accepts (rm -r, rb
 * --force): one DeleteObjects per listed page, sent while the next page is
 * listed. With `dryrun` each key is reported and nothing is deleted.
 */
export async function deleteUnder(
  ctx: TransferContext,
  bucket: string,
  prefix: string,
  options: { selected: (key: string) => boolean; dryrun: boolean },
  onResult: (result: ObjectResult) => void,
): Promise<void> {
  const pending: Promise<void>[] = [];
  try {
    for await (const page of listObjectPages(ctx, bucket, prefix)) {
      const keys = page.objects.map((o) => o.key).filter(options.selected);
      if (options.dryrun) {
        for (const key of keys) onResult({ action: "delete", source: `s3://${bucket}/${key}`, destination: "", size: 0, status: "dryrun" });
        continue;
      }
      pending.push(deleteKeys(ctx, bucket, keys, onResult));
    }
  } finally {
    // A listing that fails part-way (a page that cannot be trusted) still lets the
    // deletions of the pages before it finish and report, before the command ends.
    await Promise.all(pending);
  }
}

/** Deletes one object (mv's source, once its copy is complete), with retries. */
export async function deleteOne(ctx: TransferContext, bucket: string, key: string): Promise<void> {
  await withRetries(`DeleteObject s3://${bucket}/${key}`, ctx.retry, (_n, routing) => {
    ctx.stats.requests++;
    return deleteObject(ctx.s3, bucket, key, { signal: ctx.signal, routing });
  }, { signal: ctx.signal });
}
