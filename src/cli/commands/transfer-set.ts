import { resolve } from "node:path";
import { compileFilters, filtersFromArgv } from "../../plan/filters.js";
import { asDirectoryPrefix } from "../../plan/keys.js";
import { formatLocation, UsageError, type Location } from "../../plan/location.js";
import { formatSize } from "../../plan/parts.js";
import type { SetRules } from "../../plan/set-plan.js";
import { ObjectBatch, type BatchSummary, type ObjectResult } from "../../engine/batch.js";
import { openSet, StreamStoppedError, type SetOptions, type SetRun, type SetSourceSpec, type StreamProgress } from "../../engine/set-executor.js";
import { copyAttributesOf, objectAttributesOf } from "../options.js";
import type { RunOptions } from "../resolve-options.js";
import { requestSettings, storageSettings } from "../object-options.js";
import { endsTheRun, ExitCode, isBrokenPipe } from "../errors.js";
import { Session } from "../session.js";
import { peakRss } from "../peak-rss.js";
import { checkCopyThreshold, transferSizesOf, type SetArgs, type TransferSizes } from "./transfer-options.js";
import { checkSelectionOptions, manifestBucketsNote, manifestSource, setOrderOf, type SelectionArgs } from "./selection.js";

export type { SetArgs } from "./transfer-options.js";

/** Where a per-object line goes, and the command's final tally. */
interface Reporter {
  result(result: ObjectResult): void;
  dryrunTransfers: number;
  dryrunDeletions: number;
  /** A stream destination: why it stopped (the first object that failed). */
  streamFailure?: Error;
}

/** The commands that transfer a set of objects. */
export type SetMode = "cp" | "sync" | "mv" | "cat";

/**
 * cp --recursive, mv --recursive, sync and cat: one session, one batch of
 * object transfers. `source` undefined: the objects a --from manifest lists
 * (`base`, if given, is the prefix its keys are relative to).
 */
export async function runMany(mode: SetMode, source: SetSourceSpec | undefined, dest: Location, args: SetArgs & SelectionArgs, run: RunOptions, argv: readonly string[]): Promise<number> {
  const sizes = transferSizesOf(args, dest);
  if (source?.kind === "stream") throw new UsageError(`${mode} cannot read many objects from - (stdin)`);
  if (dest.kind === "stream" && mode !== "cp" && mode !== "cat") throw new UsageError(`${mode} cannot write many objects to - (stdout); use cp --recursive or cat`);
  checkSelectionOptions(args, { command: mode, many: true, delete: args.delete });
  if (args.from !== undefined && source?.kind === "named") throw new UsageError("--from names the objects: give no other source");
  const spec: SetSourceSpec = args.from !== undefined ? await manifestSource(args, source as Location | undefined, dest.kind !== "stream") : source ?? failNoSource(mode);
  const toStream = dest.kind === "stream";
  const session = Session.open(run, { progressAllowed: true, jsonToStderr: toStream, requests: requestSettings(args, spec.kind === "named" ? undefined : spec, dest) });
  try {
    const note = manifestBucketsNote(spec);
    if (note !== undefined) session.printer.note(note);
    return await runTransferSet(mode, session, spec, dest, args, argv, sizes);
  } finally {
    await session.close();
  }
}

function failNoSource(mode: SetMode): never {
  throw new UsageError(`${mode} needs a source (an s3:// prefix, a directory, or --from FILE)`);
}

/**
 * Every object under a directory or prefix: plan/set-plan.ts decides what
 * to do with each (filters, sync rules, key-to-path safety, dry run,
 * --delete), engine/set-executor.ts does it while the walk or listing
 * streams. Returns the exit status: 1 when any object failed.
 */
export async function runTransferSet(mode: SetMode, session: Session, source: SetSourceSpec, dest: Location, args: SetArgs & SelectionArgs, argv: readonly string[], sizes: TransferSizes): Promise<number> {
  const ctx = session.context;
  const toStream = dest.kind === "stream";
  let set: SetRun | undefined;
  const reporter = makeReporter(session, toStream, () => set?.streamProgress?.(), () => set?.streamStopped?.() ?? Promise.resolve());
  const objectSlots = Math.max(8, ctx.queue.concurrency * 2);
  const batch = new ObjectBatch(ctx, objectSlots, (r) => {
    if (r.status === "ok" || r.status === "failed") session.progress.objectDone();
    reporter.result(r);
  });
  const sync = mode === "sync";
  const fromS3 = source.kind === "s3" || source.kind === "named";
  const copying = fromS3 && dest.kind === "s3";
  const filters = compileFilters(filtersFromArgv(argv), { source: filterRoot(source), destination: filterRoot(dest) });
  const rules: SetRules = {
    filters,
    // cp --resume skips what an earlier run finished, by sync's rules (S3→S3 copies excepted); the unfinished object resumes.
    compare: sync || (args.resume && !copying),
    sync: { sizeOnly: args["size-only"] === true, exactTimestamps: args["exact-timestamps"] === true },
    delete: sync && args.delete === true,
    dryrun: args.dryrun,
  };
  const options = setOptions(mode, session, args, copying, sizes);
  options.order = setOrderOf(args, filters, (line) => session.printer.note(line), session.context.debug);
  if (toStream) options.framing = args.tar ? "tar" : "raw";
  else if (args.tar) throw new UsageError("--tar goes with a stream destination (cat, or cp --recursive to -)");
  const started = Date.now();
  if (!((source.kind === "local" && dest.kind === "s3") || (fromS3 && (dest.kind === "local" || dest.kind === "stream")) || copying)) {
    const shown = source.kind === "named" ? `--from ${source.name}` : formatLocation(source);
    throw new UsageError(`${mode} needs a local directory and an s3:// prefix, or two s3:// prefixes (got ${shown} and ${formatLocation(dest)})`);
  }
  set = await openSet(ctx, source, dest, options);
  try {
    await set.run(rules, batch, () => session.progress.addObjects(1));
  } catch (err) {
    // The listing or walk failed: the run has decided. The transfers in
    // flight are cancelled as on Ctrl-C, and waited for, so that they clean
    // up (temporary files, multipart uploads) while the connections are
    // still open, and fail quietly instead of each printing a line after the error.
    session.stop(err instanceof Error ? err : new Error(String(err)));
    await batch.finish();
    throw err;
  }

  const summary = await batch.finish();
  if (reporter.streamFailure) session.stop(reporter.streamFailure);
  await session.throwIfStopped();
  const seconds = (Date.now() - started) / 1000;
  if (session.printer.mode === "json") {
    const { requests, retries, bytesSent, bytesReceived, reusedParts, reusedBytes, verifiedObjects, unconfirmedChecksums } = ctx.stats;
    const skipped = summary.skipped - reporter.dryrunTransfers - reporter.dryrunDeletions;
    session.printer.json({
      command: mode, status: summary.failed > 0 ? "failed" : summary.warned > 0 ? "skipped" : "ok", ...summary, skipped, dryrunTransfers: reporter.dryrunTransfers, dryrunDeletions: reporter.dryrunDeletions,
      seconds, requests, retries, bytesSent, bytesReceived, reusedParts, reusedBytes, verifiedObjects, unconfirmedChecksums,
      peakBufferBytes: ctx.memory.peakUsed, peakRssBytes: peakRss(),
    });
    await session.stdout.settled();
  } else if (mode !== "cat") session.printer.note(summaryText(mode, summary, reporter, seconds));
  if (summary.failed > 0) return ExitCode.failed;
  return summary.warned > 0 ? ExitCode.skipped : ExitCode.ok;
}

/**
 * Where aws-cli roots --include/--exclude patterns for one end (plan/filters):
 * a directory's absolute path, "bucket/prefix/" for S3; none for a manifest or a stream.
 */
function filterRoot(end: SetSourceSpec): string | undefined {
  if (end.kind === "local") return resolve(end.path);
  if (end.kind === "s3") return `${end.bucket}/${asDirectoryPrefix(end.key)}`;
  return undefined;
}

/**
 * Prints each object's outcome through the session's printer, and counts
 * the dry-run lines (the engine's summary counts them as skipped).
 */
function makeReporter(session: Session, toStream: boolean, streamProgress: () => StreamProgress | undefined, streamStopped: () => Promise<void>): Reporter {
  const reporter: Reporter = {
    dryrunTransfers: 0,
    dryrunDeletions: 0,
    result(r) {
      if (r.status === "failed") {
        // Once the run is stopped (Ctrl-C, a closed stdout, a failure every
        // object would meet), objects fail for that one reason, reported at the end.
        if (session.signal.aborted) return;
        // The reader of a stream went away (`| head`): the run ends, quietly.
        if (isBrokenPipe(r.error)) {
          if (toStream) session.stop(r.error as Error);
          return;
        }
        if (endsTheRun(r.error)) {
          session.stop(r.error instanceof Error ? r.error : new Error(String(r.error)));
          return;
        }
        // A stream cannot skip an object: the first that fails ends the run, named, once the objects before it are written.
        if (toStream) {
          if (r.error instanceof StreamStoppedError || reporter.streamFailure) return; // one after it: the one that failed is reported
          session.printer.result(r);
          const failure = new StreamFailure(r.source, streamProgress);
          reporter.streamFailure = failure;
          void streamStopped().then(() => session.stop(failure));
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

/**
 * Why a stream stopped, and how far it got. Its message is read when it is
 * printed, after every transfer settled: only then is the count of objects
 * the reader received final (objects before the failed one were still
 * being written when it failed).
 */
class StreamFailure extends Error {
  constructor(at: string, progress: () => StreamProgress | undefined) {
    super();
    Object.defineProperty(this, "message", {
      get: () => {
        const got = progress();
        if (got === undefined) return `the stream stopped at ${at}`;
        const whole = `${got.wholeObjects} object${got.wholeObjects === 1 ? " was" : "s were"} written whole before it`;
        return `the stream stopped at ${got.stoppedAt ?? at}: ${whole}${got.partial ? ", and part of the next" : ""}`;
      },
    });
  }
}

/** The run's last line on stderr: every action counted, deletions and dry-run lines included. */
function summaryText(mode: SetMode, summary: BatchSummary, reporter: Reporter, seconds: number): string {
  const rate = summary.bytes / Math.max(seconds, 0.001) / 1e6;
  const skipped = summary.skipped - reporter.dryrunTransfers - reporter.dryrunDeletions;
  const counts =
    reporter.dryrunTransfers + reporter.dryrunDeletions > 0
      ? `${reporter.dryrunTransfers} to transfer, ${reporter.dryrunDeletions} to delete (dry run: nothing done)`
      : `${summary.transferred} transferred (${formatSize(summary.bytes)}), ${summary.deleted} deleted`;
  const warned = summary.warned > 0 ? ` (${summary.warned} with a warning)` : "";
  return `${mode}: ${counts}, ${skipped} skipped${warned}, ${summary.failed} failed in ${seconds.toFixed(2)} s (${rate.toFixed(1)} MB/s, ${(summary.transferred / Math.max(seconds, 0.001)).toFixed(0)} objects/s)`;
}

/**
 * The plain option values the engine runs a set with. Checked in the order
 * they always were (a wrong --checksum-algorithm is reported before a wrong
 * direction), the copy threshold only for S3→S3 copies.
 */
function setOptions(mode: SetMode, session: Session, args: SetArgs, copying: boolean, sizes: TransferSizes): SetOptions {
  const copyAttributesFor = copyAttributesOf(args); // checked before anything is sent
  const storage = storageSettings(args);
  const { partSize, multipartThreshold } = sizes;
  const { algorithm: checksum, requested: checksumRequested } = session.options.checksum();
  return {
    move: mode === "mv",
    followSymlinks: args["follow-symlinks"],
    partSize,
    multipartThreshold,
    copyThreshold: copying ? checkCopyThreshold(args) : undefined,
    keepFailedUploads: args["keep-failed-uploads"],
    checksum,
    checksumRequested,
    endpoint: session.endpoint,
    resume: args.resume,
    verifyEtag: args["verify-etag"],
    dryrun: args.dryrun,
    uploadAttributes: objectAttributesOf(args),
    copyAttributes: async (key) => ({ ...(await copyAttributesFor(key)), storage }),
  };
}
