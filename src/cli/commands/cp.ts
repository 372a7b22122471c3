import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Argv } from "yargs";
import { destinationKey, formatLocation, keyBaseName, parseLocation, UsageError, type Location } from "../../plan/location.js";
import { parseSize, uploadPartSize, DEFAULT_PART_SIZE, PlanError } from "../../plan/parts.js";
import type { AddressStats } from "../../engine/connection.js";
import { transferObject, type ObjectTransferOptions } from "../../engine/object-transfer.js";
import { copyAttributesOf, objectAttributesOf } from "../options.js";
import type { RunOptions } from "../resolve-options.js";
import { Session } from "../session.js";
import { declareOptions } from "../option-table.js";
import { runMany } from "./transfer-set.js";
import { checkSelectionOptions, withManifestOption, withShardOptions, type SelectionArgs } from "./selection.js";
import { checkCopyThreshold, copyCommandOptions, transferSizesOf, type CpArgs, type SetArgs, type TransferSizes } from "./transfer-options.js";
import { StdoutLines } from "../output.js";
import { peakRss } from "../peak-rss.js";
import { outputModeOf, ResultPrinter } from "../results.js";
import { ExitCode, InterruptError, isBrokenPipe, reportError } from "../errors.js";
import type { ObjectResult } from "../../engine/batch.js";
import { checkObjectOptions, requestSettings, storageSettings } from "../object-options.js";

export type { CpArgs } from "./transfer-options.js";

export function cpBuilder(y: Argv) {
  return declareOptions(withManifestOption(withShardOptions(copyCommandOptions(y))), ["tar"])
    .example("s3x cp ./a.bin s3://bucket/dir/", "upload a file (key dir/a.bin)")
    .example("s3x cp s3://bucket/shards/0001.tar - | tar x", "stream an object to stdout (nothing else is printed there)")
    .example("s3x cp -r ./data s3://bucket/data/ --exclude '*.tmp' --dryrun", "show what a recursive upload would do")
    .example("s3x cp s3://bucket/a s3://other-bucket/b", "copy within S3 (server-side)");
}

export interface CpResult {
  source: string;
  destination: string;
  bytes: number;
  addresses?: AddressStats[];
}

/** What `mv` does once an object's copy is complete (removes its source). */
export type AfterCopy = (session: Session, source: Location, result: CpResult) => Promise<void>;

/** `s3x cp SRC DST`: one object in every direction, or many with --recursive. */
export async function runCp(args: CpArgs & Partial<SetArgs> & SelectionArgs, run: RunOptions, argv: readonly string[], mode: "cp" | "mv" = "cp", afterCopy?: AfterCopy): Promise<number> {
  checkObjectOptions(args);
  if (args.from !== undefined) {
    if (mode === "mv") throw new UsageError("mv does not take --from");
    // cp --from FILE DEST, or cp --from FILE s3://base/ DEST (keys relative to the base).
    const destination = args.destination as string | undefined; // optional in `cp --from FILE DEST`
    const base = destination !== undefined ? parseLocation(args.source) : undefined;
    return runMany(mode, base, parseLocation(destination ?? args.source), args as SetArgs, run, argv);
  }
  if ((args.destination as string | undefined) === undefined) throw new UsageError(`${mode} needs a source and a destination`);
  const source = parseLocation(args.source);
  const dest = parseLocation(args.destination);
  if (args.recursive) return runMany(mode, source, dest, args as SetArgs, run, argv);
  checkSelectionOptions(args, { command: mode, many: false });
  const sizes = transferSizesOf(args, dest);
  const toStdout = dest.kind === "stream";
  validatePair(source, dest);
  // Checked once, before anything is sent (only an S3→S3 copy uses it).
  const copyThreshold = source.kind === "s3" && dest.kind === "s3" ? checkCopyThreshold(args) : undefined;
  const planned = await plannedCopy(source, dest);
  // aws-cli names each object of a mv "move", whichever way it goes.
  const item: PlannedCopy = mode === "mv" ? { ...planned, action: "move" } : planned;
  if (args.dryrun) return dryrun(mode, args, item, toStdout);

  const session = Session.open(run, { progressAllowed: true, jsonToStderr: toStdout, requests: requestSettings(args, source, dest) });
  if (source.kind === "stream") session.progress.totalUnknown();
  const started = Date.now();
  let result: CpResult | undefined;
  let failure: unknown;
  try {
    const copied: CpResult = await transferObject(session.context, source, dest, transferOptions(session, args, sizes, copyThreshold));
    // mv: the source goes once its copy is complete; a failed removal fails the move.
    if (afterCopy) await afterCopy(session, source, copied);
    copied.addresses = args.json ? await session.addressStats() : undefined;
    result = copied;
  } catch (err) {
    // A stopped run (Ctrl-C, a reader gone) and a wrong command line end as before: one line, their own status.
    if (session.signal.aborted || !isObjectFailure(err)) throw err;
    failure = err;
  } finally {
    await session.close();
  }
  const seconds = (Date.now() - started) / 1000;
  session.printer.result(result ? { ...item, size: result.bytes, status: "ok" } : { ...item, status: "failed", error: failure });
  if (args.json) {
    const { stats, memory } = session.context;
    session.printer.json({
      command: mode,
      status: result ? "ok" : "failed",
      transferred: result ? 1 : 0,
      deleted: 0,
      skipped: 0,
      failed: result ? 0 : 1,
      bytes: result?.bytes ?? 0,
      source: result?.source ?? item.source,
      destination: result?.destination ?? item.destination,
      addresses: result?.addresses,
      seconds,
      requests: stats.requests,
      retries: stats.retries,
      bytesSent: stats.bytesSent,
      bytesReceived: stats.bytesReceived,
      reusedParts: stats.reusedParts,
      reusedBytes: stats.reusedBytes,
      verifiedObjects: stats.verifiedObjects,
      unconfirmedChecksums: stats.unconfirmedChecksums,
      peakBufferBytes: memory.peakUsed,
      peakRssBytes: peakRss(),
    });
  }
  await session.stdout.settled();
  return result ? ExitCode.ok : reportError(failure).exitCode;
}

/** Failures of the transfer itself, reported as `upload failed: …`; usage errors stay usage errors. */
function isObjectFailure(err: unknown): boolean {
  return !(err instanceof UsageError || err instanceof PlanError || err instanceof InterruptError || isBrokenPipe(err));
}

/** What a single cp will do, before doing it: the action and both ends, as its output line names them. */
async function plannedCopy(source: Location, dest: Location): Promise<PlannedCopy> {
  if (source.kind === "local" && dest.kind === "s3") {
    const info = await stat(source.path);
    if (info.isDirectory()) throw new UsageError(`${source.path} is a directory (use --recursive)`);
    return { action: "upload", source: source.path, destination: formatLocation({ kind: "s3", bucket: dest.bucket, key: destinationKey(dest.key, basename(source.path)) }), size: info.size };
  }
  if (source.kind === "stream" && dest.kind === "s3") return { action: "upload", source: "-", destination: formatLocation(dest), size: 0 };
  if (source.kind === "s3" && dest.kind === "local") {
    const existing = await stat(dest.path).catch(() => undefined);
    const target = existing?.isDirectory() || dest.path.endsWith("/") ? join(dest.path, keyBaseName(source.key)) : dest.path;
    return { action: "download", source: formatLocation(source), destination: target, size: 0 };
  }
  if (source.kind === "s3" && dest.kind === "stream") return { action: "download", source: formatLocation(source), destination: "-", size: 0 };
  if (source.kind === "s3" && dest.kind === "s3") {
    return { action: "copy", source: formatLocation(source), destination: formatLocation({ kind: "s3", bucket: dest.bucket, key: destinationKey(dest.key, keyBaseName(source.key)) }), size: 0 };
  }
  throw new UsageError(`cannot copy ${formatLocation(source)} to ${formatLocation(dest)}`);
}

type PlannedCopy = Omit<ObjectResult, "status" | "error">;

/** cp (mv) --dryrun: the line the copy would print, prefixed "(dryrun)"; nothing is read, written or sent. */
async function dryrun(mode: "cp" | "mv", args: CpArgs, item: PlannedCopy, toStdout: boolean): Promise<number> {
  const stdout = new StdoutLines(() => undefined);
  const printer = new ResultPrinter({ stdout, progress: { interrupt: (print) => print() } }, outputModeOf(args), toStdout);
  printer.result({ ...item, status: "dryrun" });
  if (args.json) printer.json({ command: mode, status: "ok", transferred: 0, deleted: 0, skipped: 0, failed: 0, bytes: 0, dryrunTransfers: 1, dryrunDeletions: 0, source: item.source, destination: item.destination });
  await stdout.settled();
  return ExitCode.ok;
}

function validatePair(source: Location, dest: Location): void {
  if (source.kind !== "s3" && dest.kind !== "s3") throw new UsageError("cp needs an s3:// URL as source or destination");
  if (source.kind === "s3" && (source.key === "" || source.key.endsWith("/"))) {
    throw new UsageError(`${formatLocation(source)} names a prefix, not an object (use --recursive)`);
  }
  if (source.kind === "stream" && dest.kind === "s3" && (dest.key === "" || dest.key.endsWith("/"))) {
    throw new UsageError(`${formatLocation(dest)}: an upload from stdin needs a full object key`);
  }
}

/** The engine's options for one object, from the options parsed once per run; the attributes only when the kind that runs needs them. */
function transferOptions(session: Session, args: CpArgs, sizes: TransferSizes, copyThreshold: number | undefined): ObjectTransferOptions {
  const { partSize, multipartThreshold } = sizes;
  const attributesFor = objectAttributesOf(args);
  const copyAttributesFor = copyAttributesOf(args);
  const storage = storageSettings(args);
  return {
    partSize,
    resumable: { endpoint: session.endpoint, resume: args.resume },
    download: { resume: args.resume, verifyEtag: args["verify-etag"] },
    uploadOptions: async (contentTypeFrom, mtimeMs) => {
      // Checked at the first upload that asks (cli/resolve-options): a download never reads it.
      const checksum = session.options.checksum();
      return {
        multipartThreshold,
        partSize,
        attributes: await attributesFor(contentTypeFrom, mtimeMs),
        keepFailedUpload: args["keep-failed-uploads"],
        checksum: checksum.algorithm,
        checksumRequested: checksum.requested,
      };
    },
    streamPartSize: () => stdinPartSize(partSize, args["expected-size"]),
    // Only S3→S3 copies ask, and runCp has checked the threshold for them: the fallback is for the type.
    copyOptions: async (key) => ({ partSize, copyThreshold: copyThreshold ?? checkCopyThreshold(args), ...(await copyAttributesFor(key)), storage, keepFailedUpload: args["keep-failed-uploads"] }),
  };
}

/**
 * The part size of an upload from stdin: --part-size or the default, raised
 * so that --expected-size bytes fit in 10,000 parts (as aws-cli).
 */
function stdinPartSize(partSize: number | undefined, expectedSize: string | undefined): number {
  if (expectedSize === undefined) return partSize ?? DEFAULT_PART_SIZE;
  const expected = parseSize(expectedSize);
  return uploadPartSize(expected, partSize);
}
