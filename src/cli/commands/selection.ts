import { readFile } from "node:fs/promises";
import type { Argv } from "yargs";
import type { FilterSet } from "../../plan/filters.js";
import { asDirectoryPrefix } from "../../plan/keys.js";
import { formatLocation, UsageError, type Location } from "../../plan/location.js";
import { parseManifest, refuseCollisions } from "../../plan/manifest.js";
import type { SetOrder } from "../../plan/set-order.js";
import { parseShardOption } from "../../plan/shard.js";
import { parseSeed } from "../../plan/shuffle.js";
import type { SetSourceSpec } from "../../engine/set-executor.js";

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
  shuffle?: string;
  /** A stream destination's objects as tar entries. */
  tar?: boolean;
}

export function withShardOptions<T>(y: Argv<T>) {
  return y
    .option("shard", { type: "string", describe: "take shard I of N (0-based, I/N): a split of the objects balanced by bytes, the same on every run; auto: I and N from torchrun, Slurm arrays, Kubernetes Indexed Jobs or MPI", group: "Selection:" })
    .option("shard-count", { type: "number", describe: "with --shard auto under a Kubernetes Indexed Job: the number of completions (default $S3X_SHARD_COUNT)", group: "Selection:" })
    .option("shuffle", { type: "string", describe: "take the objects in an order given by this seed (the same on every worker; a new seed per epoch), before sharding", group: "Selection:" });
}

export function withManifestOption<T>(y: Argv<T>) {
  return y
    .option("from", { type: "string", describe: "the objects listed in this file (- for stdin): s3:// URLs or keys one per line, a SageMaker manifest, or JSON Lines (augmented manifest)", group: "Selection:" })
    .option("attribute", { type: "string", describe: "with --from JSON Lines: the attribute that holds each object's URL (default source-ref)", group: "Selection:" })
    .option("check-manifest", { type: "boolean", describe: "with --from: HEAD every listed object before anything moves, and stop if one is missing (default: each is checked as it is reached)", group: "Selection:" });
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

/** --shuffle and --shard, checked; `note` says which launcher --shard auto found. */
export function setOrderOf(args: SelectionArgs, filters: FilterSet, note: (line: string) => void): SetOrder | undefined {
  if (args.shard === undefined && args.shuffle === undefined) {
    if (args["shard-count"] !== undefined) throw new UsageError("--shard-count goes with --shard auto");
    return undefined;
  }
  const shard = args.shard !== undefined ? parseShardOption(args.shard, process.env, args["shard-count"]) : undefined;
  if (shard && args.shard === "auto") note(`s3x: shard ${shard.index} of ${shard.count}, from ${shard.source}`);
  return { shuffleSeed: args.shuffle !== undefined ? parseSeed(args.shuffle) : undefined, shard, filters };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
