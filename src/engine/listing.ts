import { listObjectsPage, listPages, type ListPage } from "../s3/list.js";
import type { TransferContext } from "./context.js";
import { withRetries } from "./retry.js";

/**
 * ListObjectsV2 page by page, each page retried on its own: the one way every
 * command (cp -r, sync, ls, rm) lists, so they page, retry and count alike.
 * With a delimiter, sub-prefixes come back as `prefixes` (ls without -r).
 */
export function listObjectPages(ctx: TransferContext, bucket: string, prefix: string, delimiter?: string): AsyncGenerator<ListPage> {
  return listPages((token) =>
    withRetries(`ListObjectsV2 s3://${bucket}/${prefix}`, ctx.retry, () => {
      ctx.stats.requests++;
      return listObjectsPage(ctx.client, bucket, prefix, { token, delimiter, signal: ctx.signal });
    }, { signal: ctx.signal }),
  );
}
