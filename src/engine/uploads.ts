import { listUploadsPage, type InProgressUpload } from "../s3/list.js";
import type { ObjectResult } from "./batch.js";
import { abortMultipartUpload } from "../s3/operations.js";
import { queued, type TransferContext } from "./context.js";
import { withRetries } from "./retry.js";
import { forgetUpload } from "./resume/upload-journal.js";

/** Every in-progress multipart upload under a prefix, page by page. */
export async function* inProgressUploads(ctx: TransferContext, bucket: string, prefix: string): AsyncGenerator<InProgressUpload> {
  let marker: { key?: string; uploadId?: string } | undefined = {};
  while (marker) {
    const from: { key?: string; uploadId?: string } = marker;
    const page = await withRetries(`ListMultipartUploads s3://${bucket}/${prefix}`, ctx.retry, (_n, routing) => {
      ctx.stats.requests++;
      return listUploadsPage(ctx.s3, bucket, prefix, from, { signal: ctx.signal, routing });
    }, { signal: ctx.signal });
    yield* page.uploads;
    marker = page.next;
  }
}

/** Aborts one multipart upload, freeing its stored parts (and forgetting s3x's local record of it). */
export async function abortUpload(ctx: TransferContext, bucket: string, upload: InProgressUpload): Promise<void> {
  await queued(ctx, ctx.signal, () =>
    withRetries(`AbortMultipartUpload s3://${bucket}/${upload.key}`, ctx.retry, (_n, routing) => abortMultipartUpload(ctx.s3, { bucket, key: upload.key }, upload.uploadId, { signal: ctx.signal, routing }), { signal: ctx.signal }),
  );
  await forgetUpload(upload.uploadId);
}

/**
 * Aborts every in-progress multipart upload under `prefix` started before
 * `startedBefore` (ms since the epoch; rm --uploads, rb --force), concurrently
 * through the shared queue. Each upload gets its own result.
 */
export async function abortUploadsUnder(
  ctx: TransferContext,
  bucket: string,
  prefix: string,
  options: { startedBefore: number; dryrun: boolean },
  onResult: (result: ObjectResult) => void,
): Promise<void> {
  const pending: Promise<void>[] = [];
  try {
    for await (const upload of inProgressUploads(ctx, bucket, prefix)) {
      if ((upload.initiated?.getTime() ?? 0) > options.startedBefore) continue;
      const source = `s3://${bucket}/${upload.key} (upload ${upload.uploadId})`;
      if (options.dryrun) {
        onResult({ action: "delete", source, destination: "", size: 0, status: "dryrun" });
        continue;
      }
      pending.push(
        abortUpload(ctx, bucket, upload).then(
          () => onResult({ action: "delete", source, destination: "", size: 0, status: "ok" }),
          (error: unknown) => onResult({ action: "delete", source, destination: "", size: 0, status: "failed", error }),
        ),
      );
    }
  } finally {
    // A listing that fails part-way lets the aborts of the pages before it finish and report.
    await Promise.all(pending);
  }
}
