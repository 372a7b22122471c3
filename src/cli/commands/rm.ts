import type { RunOptions } from "../resolve-options.js";
import type { Argv } from "yargs";
import { compileFilters, filtersFromArgv, isIncluded } from "../../plan/filters.js";
import { asDirectoryPrefix } from "../../plan/keys.js";
import { parseLocation, UsageError, type Location } from "../../plan/location.js";
import { deleteUnder } from "../../engine/delete.js";
import { abortUploadsUnder } from "../../engine/uploads.js";
import { objectExists, removeObject } from "../../engine/single-requests.js";
import { deleteSet } from "../../engine/set-deletion.js";
import { checkSelectionOptions, manifestBucketsNote, manifestSource, setOrderOf, withManifestOption, withShardOptions, type SelectionArgs } from "./selection.js";
import { withCommonOptions, type CommonArgs } from "../options.js";
import { DeletionReport } from "../deletions.js";
import { Session } from "../session.js";
import { declareOptions, declarePositional } from "../option-table.js";
import { requestPayerSettings, withRequestPayerOption } from "../object-options.js";

export interface RmArgs extends CommonArgs, SelectionArgs {
  "request-payer"?: string;
  path?: string;
  recursive: boolean;
  dryrun: boolean;
  uploads: boolean;
  "older-than"?: string;
}

export function rmBuilder(y: Argv) {
  const shared = withManifestOption(withShardOptions(withRequestPayerOption(withCommonOptions(y), "rm")));
  return declareOptions(declarePositional(shared, "path", "rm"), ["recursive", "include", "exclude", "dryrun", "uploads", "older-than"], "rm")
    .example("s3x rm s3://bucket/key", "delete one object")
    .example("s3x rm -r s3://bucket/tmp/ --exclude '*.keep' --dryrun", "show what a recursive delete would remove")
    .example("s3x rm -r s3://bucket/ --uploads --older-than 1d", "abort multipart uploads started over a day ago")
    .example("s3x rm --from stale.txt", "delete the objects a file lists (s3:// URLs, one per line)")
    .group([], "Options:");
}

/**
 * `s3x rm`: one key, or with --recursive every key under a prefix, deleted
 * by DeleteObjects in batches of 1,000 sent concurrently while the listing
 * is still paging. Per-key failures are reported; the exit status is 1 if any.
 */
export async function runRm(args: RmArgs, run: RunOptions, argv: readonly string[]): Promise<number> {
  if (args.path === undefined && args.from === undefined) throw new UsageError("rm needs an s3:// URL or --from FILE");
  const loc = args.path !== undefined ? parseLocation(args.path) : undefined;
  if (loc !== undefined && loc.kind !== "s3") throw new UsageError(`rm needs an s3:// URL, got "${args.path}"`);
  checkSelectionOptions(args, { command: "rm", many: args.recursive || args.from !== undefined, uploads: args.uploads, recursive: args.recursive });
  if (args.from !== undefined || args.shard !== undefined || args.shuffle !== undefined) return await runRmSet(args, loc, run, argv);
  if (loc === undefined || args.path === undefined) throw new UsageError("rm needs an s3:// URL");
  const path = args.path;
  const session = Session.open(run, { progressAllowed: false, requests: requestPayerSettings(args) });
  const ctx = session.context;
  const deletions = new DeletionReport(session);
  const report = deletions.add;
  try {
    if (args.uploads) return await abortUploads(session, loc.bucket, loc.key, args, deletions);
    if (args["older-than"] !== undefined) throw new UsageError("--older-than goes with --uploads");
    if (!args.recursive) {
      // A key ending in "/" is deleted when it holds an object (a folder marker), as aws-cli does; where it holds
      // none, s3x refuses (aws-cli deletes nothing and says "delete:"): whoever typed it most likely meant --recursive.
      const marker = loc.key !== "" && loc.key.endsWith("/") && (await objectExists(ctx, { bucket: loc.bucket, key: loc.key }, path));
      if (loc.key === "" || (loc.key.endsWith("/") && !marker)) throw new UsageError(`${path} names a prefix; use --recursive to delete everything under it`);
      if (args.dryrun) report({ action: "delete", source: path, destination: "", size: 0, status: "dryrun" });
      else {
        await removeObject(ctx, { bucket: loc.bucket, key: loc.key }, path);
        report({ action: "delete", source: path, destination: "", size: 0, status: "ok" });
      }
      return 0;
    }
    const prefix = asDirectoryPrefix(loc.key);
    const filters = compileFilters(filtersFromArgv(argv));
    await deleteUnder(ctx, loc.bucket, prefix, { selected: (key) => isIncluded(filters, key.slice(prefix.length)), dryrun: args.dryrun }, report);
    await session.throwIfStopped();
    session.printer.note(`rm: ${deletions.deleted} ${args.dryrun ? "would be deleted" : "deleted"}, ${deletions.failed} failed`);
    return deletions.failed > 0 ? 1 : 0;
  } finally {
    await session.close();
  }
}

/** rm --from FILE, rm -r --shard I/N: the set is read whole (engine/set-deletion.ts), then deleted. */
async function runRmSet(args: RmArgs, loc: Location | undefined, run: RunOptions, argv: readonly string[]): Promise<number> {
  const spec = args.from !== undefined ? await manifestSource(args, loc, false) : loc!;
  const session = Session.open(run, { progressAllowed: false, requests: requestPayerSettings(args) });
  const deletions = new DeletionReport(session);
  try {
    const note = manifestBucketsNote(spec);
    if (note !== undefined) session.printer.note(note);
    const filters = compileFilters(filtersFromArgv(argv));
    const order = setOrderOf(args, filters, (line) => session.printer.note(line));
    await deleteSet(session.context, spec, { filters, shard: order?.shard, groupBy: order?.groupBy, dryrun: args.dryrun }, deletions.add, deletions.addMissing);
    await session.throwIfStopped();
    const missing = args.from !== undefined ? `, ${deletions.missing} missing` : "";
    session.printer.note(`rm: ${deletions.deleted} ${args.dryrun ? "would be deleted" : "deleted"}, ${deletions.failed} failed${missing}`);
    return deletions.failed > 0 ? 1 : 0;
  } finally {
    await session.close();
  }
}

/** "30m", "12h", "1d", "2w" or seconds, in milliseconds. */
export function parseAge(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([smhdw]?)$/.exec(text.trim());
  if (!match) throw new UsageError(`--older-than "${text}": expected a duration such as 30m, 12h, 1d or 2w`);
  const unit: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
  return Number(match[1]) * unit[match[2]] * 1000;
}

/** rm --uploads: aborts the in-progress multipart uploads under a prefix. */
async function abortUploads(session: Session, bucket: string, prefix: string, args: RmArgs, deletions: DeletionReport): Promise<number> {
  const startedBefore = args["older-than"] !== undefined ? Date.now() - parseAge(args["older-than"]) : Number.POSITIVE_INFINITY;
  await abortUploadsUnder(session.context, bucket, prefix, { startedBefore, dryrun: args.dryrun }, deletions.add);
  await session.throwIfStopped();
  return deletions.failed > 0 ? 1 : 0;
}
