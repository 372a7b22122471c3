import { readFileSync } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Argv } from "yargs";
import { destinationKey, formatLocation, keyBaseName, parseLocation, UsageError, type Location } from "../../plan/location.js";
import { downloadPartSize, parseSize, uploadPartSize, DEFAULT_PART_SIZE, MAX_SINGLE_COPY_SIZE, PlanError } from "../../plan/parts.js";
import type { AddressStats, ObjectRef } from "../../engine/connection.js";
import { downloadObject } from "../../engine/download.js";
import { uploadFile, uploadStream, type UploadOptions } from "../../engine/upload.js";
import { copyS3Object } from "../../engine/copy.js";
import { FileSink } from "../../engine/sinks/file-sink.js";
import { OrderedWriter } from "../../engine/sinks/ordered-writer.js";
import { FdWriter } from "../../engine/sinks/fd-writer.js";
import { FdSource } from "../../engine/sources/stdin-source.js";
import { widenPipe } from "../../engine/pipe-size.js";
import { checksumAlgorithmOf, checksumRequested, objectAttributes } from "../options.js";
import { Session } from "../session.js";
import { runMany } from "./transfer-set.js";
import { checkThreshold, copyCommandOptions, type CpArgs, type SetArgs } from "./transfer-options.js";
import { StdoutLines } from "../output.js";
import { outputModeOf, ResultPrinter } from "../results.js";
import { ExitCode, InterruptError, isBrokenPipe, reportError } from "../errors.js";
import type { ObjectResult } from "../../engine/batch.js";
import { checkObjectOptions, replacesMetadata, requestSettings, storageSettings } from "../object-options.js";

export type { CpArgs } from "./transfer-options.js";

export function cpBuilder(y: Argv) {
  return copyCommandOptions(y)
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
export async function runCp(args: CpArgs & Partial<SetArgs>, argv: readonly string[], mode: "cp" | "mv" = "cp", afterCopy?: AfterCopy): Promise<number> {
  const source = parseLocation(args.source);
  const dest = parseLocation(args.destination);
  checkObjectOptions(args);
  if (args.recursive) return runMany(mode, source, dest, args as SetArgs, argv);
  const partSize = args["part-size"] !== undefined ? parseSize(args["part-size"]) : undefined;
  const threshold = checkThreshold(args);
  const toStdout = dest.kind === "stream";
  validatePair(source, dest);
  if (partSize !== undefined && dest.kind === "s3") uploadPartSize(0, partSize); // S3's part limits, before any work
  const planned = await plannedCopy(source, dest);
  // aws-cli names each object of a mv "move", whichever way it goes.
  const item: PlannedCopy = mode === "mv" ? { ...planned, action: "move" } : planned;
  if (args.dryrun) return dryrun(mode, args, item, toStdout);

  const session = await Session.open(args, { progressAllowed: true, jsonToStderr: toStdout, requests: requestSettings(args, source, dest) });
  if (source.kind === "stream") session.progress.totalUnknown();
  const started = Date.now();
  let result: CpResult | undefined;
  let failure: unknown;
  try {
    const copied = await transfer(session, source, dest, args, partSize, threshold);
    // mv: the source goes once its copy is complete; a failed removal fails the move.
    if (afterCopy) await afterCopy(session, source, copied);
    copied.addresses = args.json ? await session.connection.addressStats() : undefined;
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

/**
 * This process's peak resident memory. /proc's VmHWM belongs to this program
 * image; getrusage's maxRSS also counts the parent's RSS from before exec,
 * which would blame s3x for a big parent's memory.
 */
function peakRss(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS * 1024;
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

async function transfer(session: Session, source: Location, dest: Location, args: CpArgs, partSize: number | undefined, threshold: number): Promise<CpResult> {
  const ctx = session.context;
  const uploadOptions = async (contentTypeFrom?: string): Promise<UploadOptions> => ({
    multipartThreshold: threshold,
    partSize,
    attributes: await objectAttributes(args, contentTypeFrom),
    keepFailedUpload: args["keep-failed-uploads"],
    checksum: checksumAlgorithmOf(args, session.endpointUrl),
    checksumRequested: checksumRequested(args),
  });
  const downloadOptions = { resume: args.resume, verifyEtag: args["verify-etag"] };

  if (source.kind === "local" && dest.kind === "s3") {
    const info = await stat(source.path);
    if (info.isDirectory()) throw new UsageError(`${source.path} is a directory (use --recursive)`);
    const ref: ObjectRef = { bucket: dest.bucket, key: destinationKey(dest.key, basename(source.path)) };
    const { size } = await uploadFile(ctx, source.path, ref, { ...(await uploadOptions(source.path)), resumable: { endpoint: session.endpoint, resume: args.resume } });
    return { source: source.path, destination: formatLocation({ kind: "s3", ...ref }), bytes: size };
  }
  if (source.kind === "stream" && dest.kind === "s3") {
    const ref: ObjectRef = { bucket: dest.bucket, key: dest.key };
    widenPipe(0);
    const stdin = new FdSource(0, () => process.stdin);
    const { size } = await uploadStream(ctx, stdin, ref, { ...(await uploadOptions()), partSize: stdinPartSize(partSize, args["expected-size"]) });
    return { source: "-", destination: formatLocation(dest), bytes: size };
  }
  if (source.kind === "s3" && dest.kind === "local") {
    const ref: ObjectRef = { bucket: source.bucket, key: source.key };
    const target = await localDestination(dest.path, keyBaseName(source.key));
    if (target.special) {
      // A device or FIFO (/dev/null, a named pipe): write in order, in place;
      // a temp file renamed over it would replace the device itself.
      const handle = await open(target.path, "w");
      widenPipe(handle.fd);
      try {
        const { size } = await downloadObject(ctx, ref, new OrderedWriter(new FdWriter(handle.fd), reorderWindow(ctx.queue.concurrency)), downloadPartSize(partSize), undefined, downloadOptions);
        return { source: formatLocation(source), destination: target.path, bytes: size };
      } finally {
        await handle.close();
      }
    }
    const { size } = await downloadObject(ctx, ref, new FileSink(target.path), downloadPartSize(partSize), undefined, downloadOptions);
    return { source: formatLocation(source), destination: target.path, bytes: size };
  }
  if (source.kind === "s3" && dest.kind === "stream") {
    const ref: ObjectRef = { bucket: source.bucket, key: source.key };
    widenPipe(1);
    const { size } = await downloadObject(ctx, ref, new OrderedWriter(new FdWriter(1, () => process.stdout), reorderWindow(ctx.queue.concurrency)), downloadPartSize(partSize), undefined, downloadOptions);
    return { source: formatLocation(source), destination: "-", bytes: size };
  }
  if (source.kind === "s3" && dest.kind === "s3") {
    const from: ObjectRef = { bucket: source.bucket, key: source.key };
    const to: ObjectRef = { bucket: dest.bucket, key: destinationKey(dest.key, keyBaseName(source.key)) };
    const copyThreshold = parseSize(args["copy-threshold"]);
    if (copyThreshold > MAX_SINGLE_COPY_SIZE) throw new UsageError("--copy-threshold cannot exceed 5GiB (S3's CopyObject limit)");
    const attributes = replacesMetadata(args) ? await objectAttributes(args, to.key) : undefined;
    const { size } = await copyS3Object(ctx, from, to, { partSize, copyThreshold, attributes, storage: storageSettings(args), keepFailedUpload: args["keep-failed-uploads"] });
    return { source: formatLocation(source), destination: formatLocation({ kind: "s3", ...to }), bytes: size };
  }
  throw new UsageError(`cannot copy ${formatLocation(source)} to ${formatLocation(dest)}`);
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

/**
 * How many parts an in-order download may fetch ahead of the writer: the
 * request concurrency plus a few keeps every connection busy while one slow
 * part holds up the head of the line, without filling the memory budget.
 */
function reorderWindow(concurrency: number): number {
  return concurrency + 4;
}



/**
 * The file a download writes: the path itself, or the key's base name inside
 * it when the path is an existing directory or ends with a separator (as
 * aws-cli). Missing parent directories are created. `special` marks an
 * existing device or FIFO, which is written in place.
 */
async function localDestination(path: string, baseName: string): Promise<{ path: string; special: boolean }> {
  const existing = await stat(path).catch(() => undefined);
  const target = existing?.isDirectory() || path.endsWith("/") ? join(path, baseName) : path;
  await mkdir(dirname(target), { recursive: true });
  const targetStat = await stat(target).catch(() => undefined);
  if (targetStat?.isDirectory()) throw new UsageError(`${target} is a directory`);
  return { path: target, special: targetStat !== undefined && !targetStat.isFile() };
}
