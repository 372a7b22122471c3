import type { Argv } from "yargs";
import { compileFilters, filtersFromArgv, isIncluded } from "../../plan/filters.js";
import { asDirectoryPrefix } from "../../plan/keys.js";
import { parseLocation, UsageError } from "../../plan/location.js";
import { deleteKeys } from "../../engine/delete.js";
import { abortUpload, inProgressUploads } from "../../engine/uploads.js";
import { withRetries } from "../../engine/retry.js";
import type { ObjectResult } from "../../engine/batch.js";
import { deleteObject } from "../../s3/list.js";
import { listObjectPages } from "../../engine/listing.js";
import { withCommonOptions, type CommonArgs } from "../options.js";
import { reportError } from "../errors.js";
import { Session } from "../session.js";

export interface RmArgs extends CommonArgs {
  path: string;
  recursive: boolean;
  dryrun: boolean;
  uploads: boolean;
  "older-than"?: string;
}

export function rmBuilder(y: Argv) {
  return withCommonOptions(y)
    .positional("path", { type: "string", demandOption: true, describe: "s3://bucket/key, or s3://bucket/prefix with --recursive" })
    .option("recursive", { alias: "r", type: "boolean", default: false, describe: "delete every object under the prefix" })
    .option("include", { type: "string", array: true, describe: "include keys matching this glob (later filters win)" })
    .option("exclude", { type: "string", array: true, describe: "exclude keys matching this glob (later filters win)" })
    .option("dryrun", { type: "boolean", default: false, describe: "print what would be deleted, delete nothing" })
    .option("uploads", { type: "boolean", default: false, describe: "abort in-progress multipart uploads under the prefix instead of deleting objects" })
    .option("older-than", { type: "string", describe: "with --uploads: only uploads started longer ago than this (30m, 12h, 1d, 2w)" });
}

/**
 * `s3x rm`: one key, or with --recursive every key under a prefix, deleted
 * by DeleteObjects in batches of 1,000 sent concurrently while the listing
 * is still paging. Per-key failures are reported; the exit status is 1 if any.
 */
export async function runRm(args: RmArgs, argv: readonly string[]): Promise<number> {
  const loc = parseLocation(args.path);
  if (loc.kind !== "s3") throw new UsageError(`rm needs an s3:// URL, got "${args.path}"`);
  const session = new Session(args, { progressAllowed: false });
  const ctx = session.context;
  let deleted = 0;
  let failed = 0;
  const report = (r: ObjectResult): void => {
    if (r.status === "failed") {
      failed++;
      if (args.json) session.stdout.print(JSON.stringify({ action: "delete", source: r.source, status: "failed", error: reportError(r.error).message }) + "\n");
      else process.stderr.write(`s3x: delete failed: ${r.source}: ${reportError(r.error).message}\n`);
      return;
    }
    deleted++;
    if (args.json) session.stdout.print(JSON.stringify({ action: "delete", source: r.source, status: r.status }) + "\n");
    else if (!args.quiet) session.stdout.print(`${r.status === "dryrun" ? "(dryrun) " : ""}delete: ${r.source}\n`);
  };
  try {
    if (args.uploads) return await abortUploads(session, loc.bucket, loc.key, args, report, () => failed);
    if (args["older-than"] !== undefined) throw new UsageError("--older-than goes with --uploads");
    if (!args.recursive) {
      if (loc.key === "" || loc.key.endsWith("/")) throw new UsageError(`${args.path} names a prefix; use --recursive to delete everything under it`);
      if (args.dryrun) report({ action: "delete", source: args.path, destination: "", size: 0, status: "dryrun" });
      else {
        await withRetries(`DeleteObject ${args.path}`, ctx.retry, () => deleteObject(ctx.client, loc.bucket, loc.key, ctx.signal), { signal: ctx.signal });
        report({ action: "delete", source: args.path, destination: "", size: 0, status: "ok" });
      }
      return 0;
    }
    const prefix = asDirectoryPrefix(loc.key);
    const filters = compileFilters(filtersFromArgv(argv));
    const pending: Promise<void>[] = [];
    for await (const page of listObjectPages(ctx, loc.bucket, prefix)) {
      const keys = page.objects.map((o) => o.key).filter((key) => isIncluded(filters, key.slice(prefix.length)));
      if (args.dryrun) {
        for (const key of keys) report({ action: "delete", source: `s3://${loc.bucket}/${key}`, destination: "", size: 0, status: "dryrun" });
        continue;
      }
      // A page holds at most 1,000 keys: one DeleteObjects each, while the next page is listed.
      pending.push(deleteKeys(ctx, loc.bucket, keys, report));
    }
    await Promise.all(pending);
    if (session.signal.aborted) throw session.signal.reason;
    if (!args.quiet && !args.json) process.stderr.write(`rm: ${deleted} ${args.dryrun ? "would be deleted" : "deleted"}, ${failed} failed\n`);
    return failed > 0 ? 1 : 0;
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
async function abortUploads(session: Session, bucket: string, prefix: string, args: RmArgs, report: (r: ObjectResult) => void, failures: () => number): Promise<number> {
  const ctx = session.context;
  const cutoff = args["older-than"] !== undefined ? Date.now() - parseAge(args["older-than"]) : Number.POSITIVE_INFINITY;
  const pending: Promise<void>[] = [];
  for await (const upload of inProgressUploads(ctx, bucket, prefix)) {
    if ((upload.initiated?.getTime() ?? 0) > cutoff) continue;
    const source = `s3://${bucket}/${upload.key} (upload ${upload.uploadId})`;
    if (args.dryrun) {
      report({ action: "delete", source, destination: "", size: 0, status: "dryrun" });
      continue;
    }
    pending.push(
      abortUpload(ctx, bucket, upload).then(
        () => report({ action: "delete", source, destination: "", size: 0, status: "ok" }),
        (error: unknown) => report({ action: "delete", source, destination: "", size: 0, status: "failed", error }),
      ),
    );
  }
  await Promise.all(pending);
  if (session.signal.aborted) throw session.signal.reason;
  return failures() > 0 ? 1 : 0;
}
