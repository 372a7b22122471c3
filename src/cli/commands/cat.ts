import type { RunOptions } from "../resolve-options.js";
import type { Argv } from "yargs";
import { keyBaseName, parseLocation, UsageError, type Location } from "../../plan/location.js";
import { withCommonOptions } from "../options.js";
import { declareOptions, declarePositional, defaultOf } from "../option-table.js";
import { runMany } from "./transfer-set.js";
import { withManifestOption, withShardOptions, type SelectionArgs } from "./selection.js";
import type { SetArgs } from "./transfer-options.js";

/** `s3x cat`'s own options; the rest are the shared ones. */
export interface CatArgs extends SelectionArgs {
  source?: string;
  "part-size"?: string;
  "verify-etag": boolean;
  dryrun: boolean;
}

export function catBuilder(y: Argv) {
  return declareOptions(declarePositional(withManifestOption(withShardOptions(withCommonOptions(y))), "source", "cat"), ["tar", "include", "exclude", "dryrun", "part-size", "verify-etag"], "cat")
    .example("s3x cat s3://bucket/shards/ | consumer", "every object under a prefix, one after another")
    .example("s3x cat s3://bucket/train/ --tar --shard auto --shuffle 3 | python train.py", "this worker's shard as one tar stream, in epoch 3's order")
    .example("s3x cat --from manifest.json --tar > /tmp/pipe", "the objects a manifest lists, into a named pipe")
    .group([], "Options:");
}

/**
 * `s3x cat`: objects to stdout, one after another, fetched concurrently
 * ahead of the writer within --max-memory (engine/sinks/object-stream.ts).
 * A prefix, a manifest and one object all go the same way: --tar, --shard
 * and --shuffle apply to each.
 */
export async function runCat(args: CatArgs, run: RunOptions, argv: readonly string[]): Promise<number> {
  const source = args.source !== undefined ? parseLocation(args.source) : undefined;
  if (source !== undefined && source.kind !== "s3") throw new UsageError(`cat reads s3:// objects, got "${args.source}"`);
  if (source === undefined && args.from === undefined) throw new UsageError("cat needs an s3:// URL or --from FILE");
  const setArgs = { ...CAT_DEFAULTS, ...args } as SetArgs & SelectionArgs;
  const dest: Location = { kind: "stream" };
  if (args.from !== undefined || isPrefix(source!)) return runMany("cat", source, dest, setArgs, run, argv);
  // One object: a manifest of one line, so --tar frames it the same way; checked before anything is written.
  const one = source as Location & { kind: "s3" };
  const named = { kind: "named" as const, objects: [{ bucket: one.bucket, key: one.key, relativePath: keyBaseName(one.key) }], name: args.source!, checkFirst: true };
  return runMany("cat", named, dest, setArgs, run, argv);
}

/** A key ending in "/" (or none): every object under it. */
function isPrefix(source: Location & { kind: "s3" }): boolean {
  return source.key === "" || source.key.endsWith("/");
}

/**
 * What the transfer-set code reads that cat has no option for (cat never
 * uploads): the table's defaults, so that they cannot drift from cp's.
 */
const CAT_DEFAULTS = {
  "multipart-threshold": defaultOf("multipart-threshold"),
  "copy-threshold": defaultOf("copy-threshold"),
  "keep-failed-uploads": false,
  resume: false,
  "follow-symlinks": false,
  recursive: true,
};
