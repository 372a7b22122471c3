import { isIncluded, type FilterSet } from "../plan/filters.js";
import { stemOf, type GroupBy } from "../plan/groups.js";
import { asDirectoryPrefix } from "../plan/keys.js";
import { flatShard, shardOfKey, type ShardSpec } from "../plan/shard.js";
import type { SetSource, SourceItem } from "../plan/set-plan.js";
import type { ObjectRef } from "../s3/operations.js";
import type { ObjectResult } from "./batch.js";
import type { TransferContext } from "./context.js";
import { deleteKeys } from "./delete.js";
import { NamedObjectsSource, S3PrefixSource, type NamedItem } from "./set-ends.js";
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
 *
 * A manifest's keys are HEADed as they are reached: a key that does not
 * exist is reported as missing (`onMissing`), not deleted and not a
 * failure (DeleteObjects would call it deleted, as `aws s3 rm` does for one
 * key; for a list, which keys were already gone is worth saying). A HEAD
 * refused (403) does not stop the delete: the caller may delete without
 * being allowed to read. `checkFirst` (--check-manifest): every key HEADed
 * before anything is deleted, and a missing one deletes nothing.
 */
export async function deleteSet(
  ctx: TransferContext,
  spec: SetSourceSpec,
  options: { filters: FilterSet; shard?: ShardSpec; groupBy?: GroupBy; dryrun: boolean; checkFirst?: boolean },
  onResult: (result: ObjectResult) => void,
  onMissing: (shown: string, message: string) => void = () => undefined,
): Promise<void> {
  const source = deletionSource(ctx, spec, options.checkFirst === true);
  // A DataLoader worker's part of a shard (S3X_WORKER) is one finer shard of the hash split.
  const shard = options.shard ? flatShard(options.shard) : undefined;
  const keysByBucket = new Map<string, string[]>();
  for await (const found of source.items()) {
    const item = deletable(found);
    if ("problem" in item && item.problem.absent) {
      onMissing(item.problem.shown, item.problem.message);
      continue;
    }
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

/** A key whose HEAD was refused is still deleted (the delete's own answer is what counts). */
function deletable(item: NamedItem | SourceItem<ObjectRef>): SourceItem<ObjectRef> {
  if (!("problem" in item) || !("error" in item.problem) || item.problem.absent) return item;
  const { ref } = item.problem.error;
  return { entry: { relativePath: item.problem.relativePath ?? ref.key, size: 0, mtimeMs: 0, ref } };
}

function deletionSource(ctx: TransferContext, spec: SetSourceSpec, checkFirst: boolean): SetSource<ObjectRef> | NamedObjectsSource {
  if (spec.kind === "named") return new NamedObjectsSource(ctx, spec.objects, spec.name, checkFirst || spec.checkFirst ? "check-first" : "as-reached");
  if (spec.kind !== "s3") throw new Error(`rm deletes s3:// objects, not ${spec.kind}`);
  return new S3PrefixSource(ctx, spec.bucket, asDirectoryPrefix(spec.key), `s3://${spec.bucket}/${spec.key}`, true);
}
