import type { RunOptions } from "../resolve-options.js";
import type { Argv } from "yargs";
import { parseLocation, UsageError } from "../../plan/location.js";
import { inProgressUploads } from "../../engine/uploads.js";
import { bucketList } from "../../engine/single-requests.js";
import { listObjectPages } from "../../engine/listing.js";
import { withCommonOptions, type CommonArgs } from "../options.js";
import { Session } from "../session.js";
import { declareOptions, declarePositional } from "../option-table.js";
import { requestPayerSettings, withRequestPayerOption } from "../object-options.js";

export interface LsArgs extends CommonArgs {
  "request-payer"?: string;
  path?: string;
  recursive: boolean;
  "human-readable": boolean;
  summarize: boolean;
  uploads: boolean;
}

export function lsBuilder(y: Argv) {
  return declareOptions(declarePositional(withRequestPayerOption(withCommonOptions(y), "ls"), "path", "ls"), ["recursive", "human-readable", "summarize", "uploads"], "ls")
    .example("s3x ls", "list your buckets")
    .example("s3x ls s3://bucket/dataset/", "one level: objects and PRE lines for sub-prefixes")
    .example("s3x ls s3://bucket/dataset/ --recursive --human-readable --summarize", "every object, sizes in MiB/GiB, and a total")
    .group([], "Options:");
}

/** aws-cli's date column: local time, "2026-11-22 05:00:00". */
function stamp(date: Date | undefined): string {
  if (!date) return "                   ";
  const p = (n: number): string => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/**
 * `s3x ls`: buckets; one level of a prefix (PRE lines for sub-prefixes);
 * every object with --recursive. Pages are printed as they arrive, so a
 * listing of millions of keys starts at once and holds one page in memory.
 */
export async function runLs(args: LsArgs, run: RunOptions): Promise<number> {
  const session = Session.open(run, { progressAllowed: false, requests: requestPayerSettings(args) });
  const ctx = session.context;
  const out = (line: string): Promise<void> => session.stdout.write(line + "\n");
  try {
    // `s3://` alone names no bucket: aws-cli lists the buckets for it, as for no argument.
    if (!args.path || /^s3:\/\/\/?$/i.test(args.path)) {
      for (const bucket of await bucketList(ctx)) {
        await out(args.json ? JSON.stringify({ bucket: bucket.name, created: bucket.created?.toISOString() }) : `${stamp(bucket.created)} ${bucket.name}`);
      }
      return 0;
    }
    const loc = parseLocation(args.path);
    if (loc.kind !== "s3") throw new UsageError(`ls needs an s3:// URL, got "${args.path}"`);
    if (args.uploads) {
      for await (const upload of inProgressUploads(ctx, loc.bucket, loc.key)) {
        await out(args.json ? JSON.stringify({ key: upload.key, uploadId: upload.uploadId, initiated: upload.initiated?.toISOString() }) : `${stamp(upload.initiated)} ${upload.key} ${upload.uploadId}`);
      }
      return 0;
    }
    let count = 0;
    let prefixes = 0;
    let total = 0;
    const size = (n: number): string => (args["human-readable"] ? humanSize(n) : String(n)).padStart(10);
    const pages = listObjectPages(ctx, loc.bucket, loc.key, args.recursive ? undefined : "/");
    const base = args.recursive ? "" : loc.key.slice(0, loc.key.lastIndexOf("/") + 1);
    for await (const page of pages) {
      const lines: string[] = [];
      for (const prefix of page.prefixes) {
        prefixes++;
        lines.push(args.json ? JSON.stringify({ prefix: `s3://${loc.bucket}/${prefix}` }) : `${"PRE".padStart(30)} ${prefix.slice(base.length)}`);
      }
      for (const obj of page.objects) {
        count++;
        total += obj.size;
        lines.push(
          args.json
            ? JSON.stringify({ key: obj.key, size: obj.size, lastModified: obj.lastModified.toISOString(), etag: obj.etag })
            : `${stamp(obj.lastModified)} ${size(obj.size)} ${obj.key.slice(base.length)}`,
        );
      }
      if (lines.length > 0) await session.stdout.write(lines.join("\n") + "\n");
    }
    if (args.summarize) {
      if (args.json) await out(JSON.stringify({ totalObjects: count, totalSize: total }));
      else await out(`\nTotal Objects: ${count}\n   Total Size: ${args["human-readable"] ? humanSize(total) : total}`);
    }
    // As aws-cli: a prefix with nothing under it is an error (exit 1, nothing printed); an empty bucket is not.
    return loc.key !== "" && count === 0 && prefixes === 0 ? 1 : 0;
  } finally {
    await session.close();
  }
}

const HUMAN_UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/** A size as aws-cli's `ls --human-readable` prints it: "1 Byte", "6 Bytes", "1.0 KiB", "2.5 MiB". */
export function humanSize(bytes: number): string {
  if (bytes === 1) return "1 Byte";
  if (bytes < 1024) return `${bytes} Bytes`;
  for (let i = 0; i < HUMAN_UNITS.length; i++) {
    const unit = 1024 ** (i + 2);
    // The first unit in which the value, rounded, stays under 1024 (as aws-cli's human_readable_size).
    if (Math.round((bytes / unit) * 1024) < 1024 || i === HUMAN_UNITS.length - 1) return `${((1024 * bytes) / unit).toFixed(1)} ${HUMAN_UNITS[i]}`;
  }
  return `${bytes} Bytes`;
}
