import { readFile } from "node:fs/promises";
import type { Argv } from "yargs";
import type { FilterSet } from "../../plan/filters.js";
import { asDirectoryPrefix } from "../../plan/keys.js";
import { formatLocation, UsageError, type Location } from "../../plan/location.js";
import { parseManifest, refuseCollisions } from "../../plan/manifest.js";
import { parseGroupBy } from "../../plan/groups.js";
import type { SetOrder } from "../../plan/set-order.js";
import { describeShard, flatShard, parseShardOption, SHARD_BALANCES, type ShardBalance } from "../../plan/shard.js";
import { parseSeed } from "../../plan/shuffle.js";
import type { SetSourceSpec } from "../../engine/set-executor.js";
import { declareOptions } from "../option-table.js";

/**
 * Which objects a many-object command takes, beyond a directory or prefix:
 * a manifest (--from), this worker's shard (--shard) and the order
 * (--shuffle). For training jobs: SageMaker's manifests and
 * ShardedByS3Key, torchrun/Slurm/Kubernetes/MPI workers.
 */
export interface SelectionArgs {
  from?: string;
  attribute?: string;
  /** --check-manifest: HEAD every listed object before anything moves. */
  "check-manifest"?: boolean;
  shard?: string;
  "shard-count"?: number;
  "shard-balance"?: string;
  shuffle?: string;
  "group-by"?: string;
  /** A stream destination's objects as tar entries. */
  tar?: boolean;
}

export function withShardOptions<T>(y: Argv<T>) {
  return declareOptions(y, ["shard", "shard-balance", "shard-count", "shuffle", "group-by"]);
}

export function withManifestOption<T>(y: Argv<T>) {
  return declareOptions(y, ["from", "attribute", "check-manifest"]);
}

/** What the selection rules need to know of the rest of the command line. */
export interface SelectionUse {
  command: "cp" | "mv" | "sync" | "cat" | "rm";
  /** A set of objects: --recursive, --from, sync, cat. */
  many: boolean;
  /** sync --delete. */
  delete?: boolean;
  /** rm --uploads. */
  uploads?: boolean;
  /** rm --recursive. */
  recursive?: boolean;
}

/**
 * How --shard, --shard-count, --shard-balance, --shuffle, --group-by and
 * --tar go together and with the command: every rule in one place, checked
 * once per run before anything is read or sent (they were spread over four
 * files). What each value means is parsed by setOrderOf.
 */
export function checkSelectionOptions(args: SelectionArgs, use: SelectionUse): void {
  if (use.command === "rm") return checkRmSelection(args, use);
  if (!use.many && (args.shard !== undefined || args.shuffle !== undefined || args["group-by"] !== undefined || args.tar)) throw new UsageError("--shard, --shuffle, --group-by and --tar go with --recursive or --from");
  if (args.shard === undefined) {
    if (args["shard-count"] !== undefined) throw new UsageError("--shard-count goes with --shard auto");
    if (args["shard-balance"] !== undefined) throw new UsageError("--shard-balance goes with --shard");
  }
  if (args.shard !== undefined && use.delete) throw new UsageError("sync --delete cannot be combined with --shard: each worker sees only its shard, and would delete the others'; run --delete once without --shard");
}

/** rm deletes a set (--from, --shard) or a key or prefix; an order or a balance would change nothing. */
function checkRmSelection(args: SelectionArgs, use: SelectionUse): void {
  // Deleting in groups changes nothing but which worker deletes what: --group-by only means something to a split.
  if (args["group-by"] !== undefined && args.shard === undefined) throw new UsageError("rm takes --group-by only with --shard (it keeps a stem's objects with one worker)");
  if (args["shard-balance"] !== undefined) throw new UsageError("rm does not take --shard-balance (rm -r --shard splits by a hash of each key, since its workers change the listing)");
  if (args["shard-count"] !== undefined && args.shard === undefined) throw new UsageError("--shard-count goes with --shard auto");
  if (args.from === undefined && args.shard === undefined && args.shuffle === undefined) return;
  if (use.uploads) throw new UsageError("--uploads cannot be combined with --from or --shard");
  if (args.from === undefined && !use.recursive) throw new UsageError("--shard goes with --recursive (or --from)");
  if (args.shuffle !== undefined) throw new UsageError("rm does not take --shuffle (the order of deletions changes nothing)");
}

/**
 * The source a --from manifest names, read and checked whole before
 * anything moves. `base`: the s3:// prefix bare keys are relative to (and
 * URLs must lie under). `intoTree`: the objects land in a directory or
 * prefix (not a stream, not rm).
 */
export async function manifestSource(args: SelectionArgs, base: Location | undefined, intoTree: boolean): Promise<SetSourceSpec> {
  const path = args.from;
  if (path === undefined) throw new UsageError("--from names no manifest");
  if (base !== undefined && base.kind !== "s3") throw new UsageError(`with --from, the source is an s3:// prefix the listed keys are relative to, not ${formatLocation(base)}`);
  const name = path === "-" ? "stdin" : path;
  const text = path === "-" ? await readStdin() : await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`--from ${path}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
  });
  const entries = parseManifest(text, { base: base ? { bucket: base.bucket, prefix: asDirectoryPrefix(base.key) } : undefined, attribute: args.attribute, name });
  const checkFirst = args["check-manifest"] === true;
  if (!intoTree) return { kind: "named", objects: entries, name, checkFirst };
  // Into a directory or prefix: two objects on one path would replace each other; one object listed twice is copied once.
  refuseCollisions(entries, name);
  const seen = new Set<string>();
  const objects = entries.filter((entry) => {
    const id = `${entry.bucket}/${entry.key}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return { kind: "named", objects, name, checkFirst };
}

/**
 * A manifest naming objects in more than one bucket is taken as it is (an
 * augmented manifest may), but said, with the line where each other bucket
 * first appears: a stray URL then does not go unnoticed. (With a base URL,
 * another bucket is refused: plan/manifest.ts.)
 */
export function manifestBucketsNote(spec: SetSourceSpec): string | undefined {
  if (spec.kind !== "named" || spec.objects.length === 0) return undefined;
  const firstLine = new Map<string, number | undefined>();
  for (const object of spec.objects) if (!firstLine.has(object.bucket)) firstLine.set(object.bucket, object.line);
  if (firstLine.size < 2) return undefined;
  const [first, ...others] = [...firstLine];
  const shown = others.map(([bucket, line]) => `"${bucket}" (from line ${line ?? "?"})`).join(", ");
  return `s3x: ${spec.name} names objects in ${firstLine.size} buckets: "${first![0]}", and ${shown}`;
}

/**
 * --shuffle and --shard, checked. `note` (a line for people, not with
 * --quiet) says which launcher --shard auto found, once per process, and
 * that this worker's share is empty when it is; `debug` gets the share's
 * object and byte counts.
 */
export function setOrderOf(args: SelectionArgs, filters: FilterSet, note: (line: string) => void, debug?: (line: string) => void): SetOrder | undefined {
  if (args.shard === undefined && args.shuffle === undefined && args["group-by"] === undefined) return undefined;
  const groupBy = args["group-by"] !== undefined ? parseGroupBy(args["group-by"]) : undefined;
  const shardBalance = shardBalanceOf(args["shard-balance"]);
  const shard = args.shard !== undefined ? parseShardOption(args.shard, process.env, args["shard-count"]) : undefined;
  if (shard && (args.shard === "auto" || shard.within)) note(`s3x: ${describeShard(shard)}`);
  const onShare: SetOrder["onShare"] = (share) => {
    if (!shard) return;
    const groups = share.groups !== undefined ? `${share.groups} of the ${share.ofGroups} stems, ` : "";
    debug?.(`${describeShard(shard)}: ${groups}${share.objects} of the ${share.ofObjects} objects, ${share.bytes} bytes (balanced by ${shardBalance}${groupBy ? ` of ${groupBy}s` : ""})`);
    // More workers than objects: an empty share is legitimate (exit 0), but an idle worker should not go unremarked.
    const units = share.ofGroups !== undefined ? `${share.ofGroups} stems (${share.ofObjects} objects)` : `${share.ofObjects} objects`;
    if (share.objects === 0 && share.ofObjects > 0) note(`s3x: this worker's share is empty: ${units} split ${flatShard(shard).count} ways leave none to it`);
  };
  return { shuffleSeed: args.shuffle !== undefined ? parseSeed(args.shuffle) : undefined, shard, shardBalance, groupBy, onShare, filters };
}

function shardBalanceOf(value: string | undefined): ShardBalance {
  if (value === undefined) return "bytes";
  const balance = SHARD_BALANCES.find((b) => b === value.trim());
  if (!balance) throw new UsageError(`invalid --shard-balance "${value}": expected ${SHARD_BALANCES.join(" or ")}`);
  return balance;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
