import type { Argv } from "yargs";
import { keyBaseName, parseLocation, UsageError, type Location } from "../../plan/location.js";
import { withCommonOptions } from "../options.js";
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
  return withManifestOption(withShardOptions(withCommonOptions(y)))
    .positional("source", { type: "string", describe: "s3://bucket/key, or s3://bucket/prefix/ for every object under it (in listing order); with --from, the prefix the listed keys are relative to" })
    .option("tar", { type: "boolean", default: false, describe: "write each object as a tar entry (its key as the name), then the end of the archive", group: "Selection:" })
    .option("include", { type: "string", array: true, describe: "include keys matching this glob (later filters win)", group: "Selection:" })
    .option("exclude", { type: "string", array: true, describe: "exclude keys matching this glob (later filters win)", group: "Selection:" })
    .option("dryrun", { type: "boolean", default: false, describe: "print what would be written, write nothing", group: "Selection:" })
    .option("part-size", { type: "string", describe: "part size of the ranged GETs (e.g. 16MiB)", group: "Transfer:" })
    .option("verify-etag", { type: "boolean", default: false, describe: "check single-part objects against their MD5 ETag", group: "Integrity:" })
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
export async function runCat(args: CatArgs, argv: readonly string[]): Promise<number> {
  const source = args.source !== undefined ? parseLocation(args.source) : undefined;
  if (source !== undefined && source.kind !== "s3") throw new UsageError(`cat reads s3:// objects, got "${args.source}"`);
  if (source === undefined && args.from === undefined) throw new UsageError("cat needs an s3:// URL or --from FILE");
  const setArgs = { ...CAT_DEFAULTS, ...args } as SetArgs & SelectionArgs;
  const dest: Location = { kind: "stream" };
  if (args.from !== undefined || isPrefix(source!)) return runMany("cat", source, dest, setArgs, argv);
  // One object: a manifest of one line, so --tar frames it the same way; checked before anything is written.
  const one = source as Location & { kind: "s3" };
  const named = { kind: "named" as const, objects: [{ bucket: one.bucket, key: one.key, relativePath: keyBaseName(one.key) }], name: args.source!, checkFirst: true };
  return runMany("cat", named, dest, setArgs, argv);
}

/** A key ending in "/" (or none): every object under it. */
function isPrefix(source: Location & { kind: "s3" }): boolean {
  return source.key === "" || source.key.endsWith("/");
}

/** What the transfer-set code reads that cat has no option for (cat never uploads). */
const CAT_DEFAULTS = {
  "multipart-threshold": "8MiB",
  "copy-threshold": "5GiB",
  "keep-failed-uploads": false,
  resume: false,
  "follow-symlinks": false,
  recursive: true,
};
