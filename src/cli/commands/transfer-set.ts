import { compileFilters, filtersFromArgv } from "../../plan/filters.js";
import { formatLocation, UsageError, type Location } from "../../plan/location.js";
import { formatSize, parseSize, uploadPartSize } from "../../plan/parts.js";
import type { SetRules } from "../../plan/set-plan.js";
import { ObjectBatch, type BatchSummary, type ObjectResult } from "../../engine/batch.js";
import { openSet, type SetOptions } from "../../engine/set-executor.js";
import { checksumAlgorithmOf, checksumRequested, objectAttributes } from "../options.js";
import { replacesMetadata, requestSettings, storageSettings } from "../object-options.js";
import { endsTheRun, isBrokenPipe } from "../errors.js";
import { Session } from "../session.js";
import { checkThreshold, type SetArgs } from "./transfer-options.js";

export type { SetArgs } from "./transfer-options.js";

/** Where a per-object line goes, and the command's final tally. */
interface Reporter {
  result(result: ObjectResult): void;
  dryrunTransfers: number;
  dryrunDeletions: number;
}

/** cp --recursive, mv --recursive and sync: one session, one batch of object transfers. */
export async function runMany(mode: "cp" | "sync" | "mv", source: Location, dest: Location, args: SetArgs, argv: readonly string[]): Promise<number> {
  const partSize = args["part-size"] !== undefined ? parseSize(args["part-size"]) : undefined;
  checkThreshold(args);
  if (partSize !== undefined && dest.kind === "s3") uploadPartSize(0, partSize);
  if (source.kind === "stream" || dest.kind === "stream") throw new UsageError(`${mode} cannot use - (stdin/stdout) with many objects`);
  const session = await Session.open(args, { progressAllowed: true, requests: requestSettings(args, source, dest) });
  try {
    return await runTransferSet(mode, session, source, dest, args, argv);
  } finally {
    await session.close();
  }
}

/**
 * Every object under a directory or prefix: plan/set-plan.ts decides what
 * to do with each (filters, sync rules, key-to-path safety, dry run,
 * --delete), engine/set-executor.ts does it while the walk or listing
 * streams. Returns the exit status: 1 when any object failed.
 */
export async function runTransferSet(mode: "cp" | "sync" | "mv", session: Session, source: Location, dest: Location, args: SetArgs, argv: readonly string[]): Promise<number> {
  const ctx = session.context;
  const reporter = makeReporter(session);
  const objectSlots = Math.max(8, ctx.queue.concurrency * 2);
  const batch = new ObjectBatch(ctx, objectSlots, (r) => {
    if (r.status === "ok" || r.status === "failed") session.progress.objectDone();
    reporter.result(r);
  });
  const sync = mode === "sync";
  const copying = source.kind === "s3" && dest.kind === "s3";
  const rules: SetRules = {
    filters: compileFilters(filtersFromArgv(argv)),
    // cp --resume skips what an earlier run finished, by sync's rules (S3→S3 copies excepted); the unfinished object resumes.
    compare: sync || (args.resume && !copying),
    sync: { sizeOnly: args["size-only"] === true, exactTimestamps: args["exact-timestamps"] === true },
    delete: sync && args.delete === true,
    dryrun: args.dryrun,
  };
  const options = setOptions(mode, session, args, copying);
  const started = Date.now();
  if (!((source.kind === "local" && dest.kind === "s3") || (source.kind === "s3" && dest.kind === "local") || copying)) {
    throw new UsageError(`${mode} needs a local directory and an s3:// prefix, or two s3:// prefixes (got ${formatLocation(source)} and ${formatLocation(dest)})`);
  }
  const set = await openSet(ctx, source, dest, options);
  await set.run(rules, batch, () => session.progress.addObjects(1));

  const summary = await batch.finish();
  await session.throwIfStopped();
  const seconds = (Date.now() - started) / 1000;
  if (session.printer.mode === "json") {
    const { requests, retries, bytesSent, bytesReceived, reusedParts, reusedBytes, verifiedObjects, unconfirmedChecksums } = ctx.stats;
    const skipped = summary.skipped - reporter.dryrunTransfers - reporter.dryrunDeletions;
    session.printer.json({
      command: mode, status: summary.failed > 0 ? "failed" : "ok", ...summary, skipped, dryrunTransfers: reporter.dryrunTransfers, dryrunDeletions: reporter.dryrunDeletions,
      seconds, requests, retries, bytesSent, bytesReceived, reusedParts, reusedBytes, verifiedObjects, unconfirmedChecksums,
    });
    await session.stdout.settled();
  } else session.printer.note(summaryText(mode, summary, reporter, seconds));
  return summary.failed > 0 ? 1 : 0;
}

/**
 * Prints each object's outcome through the session's printer, and counts
 * the dry-run lines (the engine's summary counts them as skipped).
 */
function makeReporter(session: Session): Reporter {
  const reporter: Reporter = {
    dryrunTransfers: 0,
    dryrunDeletions: 0,
    result(r) {
      if (r.status === "failed") {
        // Once the run is stopped (Ctrl-C, a closed stdout, a failure every
        // object would meet), objects fail for that one reason, reported at the end.
        if (session.signal.aborted || isBrokenPipe(r.error)) return;
        if (endsTheRun(r.error)) {
          session.stop(r.error instanceof Error ? r.error : new Error(String(r.error)));
          return;
        }
      }
      if (r.status === "dryrun") {
        if (r.action === "delete") reporter.dryrunDeletions++;
        else reporter.dryrunTransfers++;
      }
      session.printer.result(r);
    },
  };
  return reporter;
}

/** The run's last line on stderr: every action counted, deletions and dry-run lines included. */
function summaryText(mode: "cp" | "sync" | "mv", summary: BatchSummary, reporter: Reporter, seconds: number): string {
  const rate = summary.bytes / Math.max(seconds, 0.001) / 1e6;
  const skipped = summary.skipped - reporter.dryrunTransfers - reporter.dryrunDeletions;
  const counts =
    reporter.dryrunTransfers + reporter.dryrunDeletions > 0
      ? `${reporter.dryrunTransfers} to transfer, ${reporter.dryrunDeletions} to delete (dry run: nothing done)`
      : `${summary.transferred} transferred (${formatSize(summary.bytes)}), ${summary.deleted} deleted`;
  return `${mode}: ${counts}, ${skipped} skipped, ${summary.failed} failed in ${seconds.toFixed(2)} s (${rate.toFixed(1)} MB/s, ${(summary.transferred / Math.max(seconds, 0.001)).toFixed(0)} objects/s)`;
}

/**
 * The plain option values the engine runs a set with. Checked in the order
 * they always were (a wrong --checksum-algorithm is reported before a wrong
 * direction), the copy threshold only for S3→S3 copies.
 */
function setOptions(mode: "cp" | "sync" | "mv", session: Session, args: SetArgs, copying: boolean): SetOptions {
  const replace = replacesMetadata(args);
  const storage = storageSettings(args);
  const partSize = args["part-size"] !== undefined ? parseSize(args["part-size"]) : undefined;
  const multipartThreshold = parseSize(args["multipart-threshold"]);
  const checksum = checksumAlgorithmOf(args);
  return {
    move: mode === "mv",
    followSymlinks: args["follow-symlinks"],
    partSize,
    multipartThreshold,
    copyThreshold: copying ? parseSize(args["copy-threshold"]) : undefined,
    keepFailedUploads: args["keep-failed-uploads"],
    checksum,
    checksumRequested: checksumRequested(args),
    endpoint: session.endpoint,
    resume: args.resume,
    verifyEtag: args["verify-etag"],
    dryrun: args.dryrun,
    uploadAttributes: (relativePath, mtimeMs) => objectAttributes(args, relativePath, mtimeMs),
    copyAttributes: async (key) => ({ attributes: replace ? await objectAttributes(args, key) : undefined, storage }),
  };
}
