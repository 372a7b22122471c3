import type { RunOptions } from "../resolve-options.js";
import type { Argv } from "yargs";
import { keyBaseName, parseLocation, UsageError, type Location } from "../../plan/location.js";
import { withCommonOptions } from "../options.js";
import { declareOptions, declarePositional, defaultOf } from "../option-table.js";
import { runMany } from "./transfer-set.js";
import { checkSelectionOptions, withManifestOption, withShardOptions, type SelectionArgs } from "./selection.js";
import { transferSizesOf, type SetArgs } from "./transfer-options.js";
import { Session } from "../session.js";
import { requestSettings } from "../object-options.js";
import { streamObject } from "../../engine/object-transfer.js";
import { missingObjectError } from "../../engine/set-ends.js";
import { ExitCode } from "../errors.js";

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
  const one = source as Location & { kind: "s3" };
  checkSelectionOptions(setArgs, { command: "cat", many: true });
  if (plainOne(args)) return catOne(one, setArgs, run);
  // One object with --tar, --shard, --shuffle, --json or --dryrun: a manifest of one line, so it goes the
  // way of many (a tar entry needs its size before the first byte: checked with a HEAD first).
  const named = { kind: "named" as const, objects: [{ bucket: one.bucket, key: one.key, relativePath: keyBaseName(one.key) }], name: args.source!, checkFirst: true };
  return runMany("cat", named, dest, setArgs, run, argv);
}

/** One object, raw, with nothing the set path adds (framing, selection, a summary, a dry run). */
function plainOne(args: CatArgs & { json?: boolean }): boolean {
  return !args.tar && args.shard === undefined && args.shuffle === undefined && args["group-by"] === undefined && !args.dryrun && !args.json;
}

/**
 * One object's bytes to stdout, as `cp s3://… -` sends them: the first GET
 * reveals the size, with no HEAD before it. That is one request less per
 * process in the `pipe:` pattern (a process per shard), and on radosgw no
 * 40 ms wait for a small answer on a reused connection (a GET after a HEAD
 * on the same connection waits out the client's delayed ACK: radosgw writes
 * an answer's head and body apart, with Nagle's algorithm on). A missing or
 * forbidden object is named as the set path names it.
 */
async function catOne(source: Location & { kind: "s3" }, args: SetArgs & SelectionArgs, run: RunOptions): Promise<number> {
  const dest: Location = { kind: "stream" };
  const { partSize } = transferSizesOf(args, dest);
  const session = Session.open(run, { progressAllowed: true, jsonToStderr: true, requests: requestSettings(args, source, dest) });
  const ref = { bucket: source.bucket, key: source.key };
  try {
    await streamObject(session.context, ref, partSize, { verifyEtag: args["verify-etag"] });
  } catch (err) {
    throw (session.signal.aborted ? undefined : missingObjectError(err, ref)) ?? err;
  } finally {
    await session.close();
  }
  await session.throwIfStopped();
  return ExitCode.ok;
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
