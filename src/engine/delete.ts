import { deleteObjects } from "../s3/list.js";
import type { TransferContext } from "./context.js";
import type { ObjectResult } from "./batch.js";
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
        const failures = await withRetries(`DeleteObjects s3://${bucket} (${chunk.length} keys)`, ctx.retry, () => {
          ctx.stats.requests++;
          return deleteObjects(ctx.client, bucket, chunk, ctx.signal);
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
    batches.push(ctx.queue.add(send, { signal: ctx.signal }).catch(() => undefined));
  }
  await Promise.all(batches);
}
