import { isIncluded, type FilterSet } from "../plan/filters.js";
import { stemOf, type GroupBy } from "../plan/groups.js";
import { asDirectoryPrefix } from "../plan/keys.js";
import { flatShard, shardOfKey, type ShardSpec } from "../plan/shard.js";
import type { SetSource } from "../plan/set-plan.js";
import type { ObjectRef } from "../s3/operations.js";
import type { ObjectResult } from "./batch.js";
import type { TransferContext } from "./context.js";
import { deleteKeys } from "./delete.js";
import { NamedObjectsSource, S3PrefixSource } from "./set-ends.js";
import type { SetSourceSpec } from "./set-executor.js";

/**
 * rm of a set chosen beyond a plain prefix: the objects a manifest lists
 * (rm --from), or this worker's shard of a prefix (rm -r --shard). Shards
 * are split by a hash of each key (plan/shard.ts shardOfKey), not by bytes
 * over the listing as transfers are: the workers delete from the very
 * listing they split, so it differs from one worker's start to the next.
 * The keys go out in DeleteObjects batches, bucket by bucket, at the end.
 * With --group-by stem the hash is of the key's stem, so one worker deletes
 * all of a sample's objects. Folder markers are deleted too, as `rm -r` does.
 */
export async function deleteSet(
  ctx: TransferContext,
  spec: SetSourceSpec,
  options: { filters: FilterSet; shard?: ShardSpec; groupBy?: GroupBy; dryrun: boolean },
  onResult: (result: ObjectResult) => void,
): Promise<void> {
  const source = deletionSource(ctx, spec);
  // A DataLoader worker's part of a shard (S3X_WORKER) is one finer shard of the hash split.
  const shard = options.shard ? flatShard(options.shard) : undefined;
  const keysByBucket = new Map<string, string[]>();
  for await (const item of source.items()) {
    if ("problem" in item) {
      onResult({ action: "delete", source: item.problem.shown, destination: "", size: 0, status: "failed", error: new Error(item.problem.message) });
      continue;
    }
    const { entry } = item;
    if (!isIncluded(options.filters, entry.relativePath)) continue;
    const id = `${entry.ref.bucket}/${entry.ref.key}`;
    if (shard && shardOfKey(options.groupBy ? stemOf(id) : id, shard.count) !== shard.index) continue;
    if (options.dryrun) {
      onResult({ action: "delete", source: source.shown(entry), destination: "", size: 0, status: "dryrun" });
      continue;
    }
    const keys = keysByBucket.get(entry.ref.bucket) ?? [];
    keys.push(entry.ref.key);
    keysByBucket.set(entry.ref.bucket, keys);
  }
  await Promise.all([...keysByBucket].map(([bucket, keys]) => deleteKeys(ctx, bucket, keys, onResult)));
}

function deletionSource(ctx: TransferContext, spec: SetSourceSpec): SetSource<ObjectRef> {
  if (spec.kind === "named") return new NamedObjectsSource(ctx, spec.objects, spec.name, false);
  if (spec.kind !== "s3") throw new Error(`rm deletes s3:// objects, not ${spec.kind}`);
  return new S3PrefixSource(ctx, spec.bucket, asDirectoryPrefix(spec.key), `s3://${spec.bucket}/${spec.key}`, true);
}
