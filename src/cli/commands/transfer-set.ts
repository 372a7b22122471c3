import { mkdir, stat, unlink } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { Argv } from "yargs";
import { compileFilters, filtersFromArgv, isIncluded, type FilterSet } from "../../plan/filters.js";
import { asDirectoryPrefix, isFolderMarker, placeKey } from "../../plan/keys.js";
import { formatLocation, UsageError, type Location } from "../../plan/location.js";
import { downloadPartSize, formatSize, parseSize } from "../../plan/parts.js";
import { needsCopy, type EntryState } from "../../plan/sync.js";
import { ObjectBatch, type BatchSummary, type ObjectResult } from "../../engine/batch.js";
import { copyS3Object, type CopyOptions } from "../../engine/copy.js";
import { downloadObject } from "../../engine/download.js";
import { FileSink } from "../../engine/sinks/file-sink.js";
import { BlockingWrites } from "../../engine/sinks/blocking-writes.js";
import { LeftoverIndex } from "../../engine/sinks/leftover-index.js";
import { forgetFinishedUploads, uploadFile } from "../../engine/upload.js";
import { PathStats, walkFiles, type LocalEntry } from "../../engine/walk.js";
import type { ListedObject } from "../../s3/list.js";
import { listObjectPages } from "../../engine/listing.js";
import { deleteKeys, deleteOne } from "../../engine/delete.js";
import { checksumAlgorithmOf, checksumRequested, objectAttributes } from "../options.js";
import { replacesMetadata, storageSettings } from "../object-options.js";
import { endsTheRun, isBrokenPipe } from "../errors.js";
import type { CpArgs } from "./cp.js";
import type { Session } from "../session.js";

/** Options of commands that handle many objects (cp --recursive, mv --recursive, sync). */
export interface SetArgs extends CpArgs {
  dryrun: boolean;
  "follow-symlinks": boolean;
  delete?: boolean;
  "size-only"?: boolean;
  "exact-timestamps"?: boolean;
}

export function withSetOptions<T>(y: Argv<T>) {
  return y
    .option("include", { type: "string", array: true, describe: "include paths matching this glob (later filters win)", group: "Selection:" })
    .option("exclude", { type: "string", array: true, describe: "exclude paths matching this glob (later filters win)", group: "Selection:" })
    .option("dryrun", { type: "boolean", default: false, describe: "print what would be done, change nothing", group: "Selection:" })
    .option("follow-symlinks", { type: "boolean", default: true, describe: "follow symlinks when uploading a directory (--no-follow-symlinks skips them)", group: "Selection:" });
}

/** Where a per-object line goes, and the command's final tally. */
interface Reporter {
  result(result: ObjectResult): void;
  dryrunTransfers: number;
  dryrunDeletions: number;
}


/**
 * cp --recursive and sync: every object under a directory or prefix. The
 * walk or listing streams into the batch, so transfers start while the
 * listing is still paging. Returns the exit status: 1 when any object failed.
 */
export async function runTransferSet(mode: "cp" | "sync" | "mv", session: Session, source: Location, dest: Location, args: SetArgs, argv: readonly string[]): Promise<number> {
  const ctx = session.context;
  const filters = compileFilters(filtersFromArgv(argv));
  const reporter = makeReporter(session);
  const objectSlots = Math.max(8, ctx.queue.concurrency * 2);
  const batch = new ObjectBatch(ctx, objectSlots, (r) => {
    if (r.status === "ok" || r.status === "failed") session.progress.objectDone();
    reporter.result(r);
  });
  const sync = mode === "sync";
  // mv removes each source once its copy is complete; a failed copy removes nothing.
  const move = mode === "mv";
  const attributesOf = objectAttributesOf(args);
  const rules = { sizeOnly: args["size-only"] === true, exactTimestamps: args["exact-timestamps"] === true };
  const partSize = args["part-size"] !== undefined ? parseSize(args["part-size"]) : undefined;
  const multipartThreshold = parseSize(args["multipart-threshold"]);
  const checksum = checksumAlgorithmOf(args, session.endpointUrl);
  const downloadOptions = { resume: args.resume, verifyEtag: args["verify-etag"] };
  // cp --resume skips what an earlier run finished, by sync's rules; the unfinished object resumes.
  const skipFinished = sync || args.resume;
  const started = Date.now();
  // Local stats may block the event loop while no request is queued or
  // running (a sync gathering both sides, a copy's first files): engine/walk.
  const nothingInFlight = (): boolean => ctx.queue.pending === 0 && ctx.queue.size === 0;

  if (source.kind === "local" && dest.kind === "s3") {
    const info = await stat(source.path);
    if (!info.isDirectory()) throw new UsageError(`${source.path} is not a directory`);
    const prefix = asDirectoryPrefix(dest.key);
    const seen = new Set<string>();
    const walk = walkFiles(source.path, {
      followSymlinks: args["follow-symlinks"],
      onProblem: (p) => batch.record({ action: "upload", source: join(source.path, p.relativePath), destination: "", size: 0, status: "failed", error: new Error(p.message) }),
      mayBlock: nothingInFlight,
    });
    // sync needs the destination's listing before deciding anything: walk
    // the directory while the listing pages, instead of one after the other.
    let remote: Map<string, EntryState> | undefined;
    let entries: AsyncIterable<LocalEntry> | LocalEntry[] = walk;
    if (skipFinished) [remote, entries] = await Promise.all([listAll(session, dest.bucket, prefix), collect(walk)]);
    for await (const entry of entries) {
      if (!isIncluded(filters, entry.relativePath)) continue;
      seen.add(entry.relativePath);
      const key = prefix + entry.relativePath;
      const destination = `s3://${dest.bucket}/${key}`;
      if (skipFinished && !needsCopy(entry, remote?.get(entry.relativePath), "upload", rules)) {
        if (args.resume && !args.dryrun) await forgetFinishedUploads(session.context, session.endpoint, { bucket: dest.bucket, key });
        batch.record({ action: "upload", source: entry.absolutePath, destination, size: entry.size, status: "skipped" });
        continue;
      }
      const item = { action: move ? ("move" as const) : ("upload" as const), source: join(source.path, entry.relativePath), destination, size: entry.size };
      if (args.dryrun) {
        batch.record({ ...item, status: "dryrun" });
        continue;
      }
      session.progress.addObjects(1);
      await batch.submit(item, async () => {
        const attributes = await objectAttributes(args, entry.relativePath, entry.mtimeMs);
        const result = await uploadFile(ctx, entry.absolutePath, { bucket: dest.bucket, key }, {
          multipartThreshold,
          partSize,
          attributes,
          keepFailedUpload: args["keep-failed-uploads"],
          checksum,
          checksumRequested: checksumRequested(args),
          resumable: { endpoint: session.endpoint, resume: args.resume },
        });
        if (move) await unlink(entry.absolutePath);
        return result.size;
      });
    }
    if (sync && args.delete && remote) await deleteRemote(session, batch, dest.bucket, prefix, [...remote.keys()].filter((rel) => !seen.has(rel) && isIncluded(filters, rel)), args.dryrun);
  } else if (source.kind === "s3" && dest.kind === "local") {
    const prefix = asDirectoryPrefix(source.key);
    const root = resolve(dest.path);
    await mkdir(root, { recursive: true });
    const seen = new Set<string>();
    const madeDirectories = new Set<string>([root]);
    const leftovers = new LeftoverIndex();
    const blockingWrites = new BlockingWrites();
    const localStats = new PathStats(nothingInFlight);
    const sourceListing = { whole: false };
    for await (const obj of listing(session, source.bucket, prefix, sourceListing)) {
      if (isFolderMarker(obj)) continue;
      const relativeKey = obj.key.slice(prefix.length);
      const placement = placeKey(relativeKey);
      const src = `s3://${source.bucket}/${obj.key}`;
      if (!placement.ok) {
        batch.record({ action: "download", source: src, destination: "", size: obj.size, status: "failed", error: new Error(`refused key "${obj.key}": ${placement.reason}`) });
        continue;
      }
      if (!isIncluded(filters, relativeKey)) continue;
      const target = placement.relativePath === "" ? root : join(root, placement.relativePath);
      if (target !== root && !target.startsWith(root + sep)) {
        batch.record({ action: "download", source: src, destination: target, size: obj.size, status: "failed", error: new Error(`refused key "${obj.key}": it would land outside the destination directory`) });
        continue;
      }
      if (placement.directoryMarker) {
        // Not a folder marker (those are empty and skipped above): bytes under a name no file can have.
        batch.record({ action: "download", source: src, destination: target, size: obj.size, status: "failed", error: new Error(`refused key "${obj.key}": it ends in "/", as a folder does, but holds ${obj.size} bytes`) });
        continue;
      }
      seen.add(placement.relativePath);
      if (skipFinished) {
        const local = await localStats.stat(target);
        if (local?.isFile() && !needsCopy({ size: obj.size, mtimeMs: obj.lastModified.getTime() }, { size: local.size, mtimeMs: local.mtimeMs }, "download", rules)) {
          batch.record({ action: "download", source: src, destination: target, size: obj.size, status: "skipped" });
          continue;
        }
      }
      const item = { action: move ? ("move" as const) : ("download" as const), source: src, destination: join(dest.path, placement.relativePath), size: obj.size };
      if (args.dryrun) {
        batch.record({ ...item, status: "dryrun" });
        continue;
      }
      session.progress.addObjects(1);
      await batch.submit(item, async () => {
        // Thousands of objects share a few directories: create each once per run.
        const parent = dirname(target);
        if (!madeDirectories.has(parent)) {
          await mkdir(parent, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== "EEXIST" && err.code !== "ENOTDIR") throw err;
            throw new Error(`${parent}: a file of the same name is in the way (the key clashes with another key)`);
          });
          madeDirectories.add(parent);
        }
        const result = await downloadObject(ctx, { bucket: source.bucket, key: obj.key }, new FileSink(target, leftovers, blockingWrites), downloadPartSize(partSize), obj.size, downloadOptions);
        if (move) await deleteOne(ctx, source.bucket, obj.key);
        return result.size;
      });
    }
    if (sync && args.delete) {
      requireWholeListing(sourceListing, source);
      await deleteLocal(batch, root, dest.path, seen, filters, args.dryrun);
    }
  } else if (source.kind === "s3" && dest.kind === "s3") {
    const srcPrefix = asDirectoryPrefix(source.key);
    const destPrefix = asDirectoryPrefix(dest.key);
    const seen = new Set<string>();
    const copyThreshold = parseSize(args["copy-threshold"]);
    // As for uploads: list both sides at once when syncing.
    let remote: Map<string, EntryState> | undefined;
    const sourceListing = { whole: false };
    let sourceObjects: AsyncIterable<ListedObject> | ListedObject[] = listing(session, source.bucket, srcPrefix, sourceListing);
    if (sync) [remote, sourceObjects] = await Promise.all([listAll(session, dest.bucket, destPrefix), collect(sourceObjects)]);
    for await (const obj of sourceObjects) {
      // As aws-cli, folder markers are not copied (the destination side's listing never counts them either).
      if (isFolderMarker(obj)) continue;
      const relativeKey = obj.key.slice(srcPrefix.length);
      if (!isIncluded(filters, relativeKey)) continue;
      seen.add(relativeKey);
      const key = destPrefix + relativeKey;
      const item = { action: move ? ("move" as const) : ("copy" as const), source: `s3://${source.bucket}/${obj.key}`, destination: `s3://${dest.bucket}/${key}`, size: obj.size };
      if (sync && !needsCopy({ size: obj.size, mtimeMs: obj.lastModified.getTime() }, remote?.get(relativeKey), "copy", rules)) {
        batch.record({ ...item, status: "skipped" });
        continue;
      }
      if (args.dryrun) {
        batch.record({ ...item, status: "dryrun" });
        continue;
      }
      session.progress.addObjects(1);
      await batch.submit(item, async () => {
        const result = await copyS3Object(ctx, { bucket: source.bucket, key: obj.key }, { bucket: dest.bucket, key }, { partSize, copyThreshold, keepFailedUpload: args["keep-failed-uploads"], listedSize: obj.size, ...(await attributesOf(key)) });
        if (move) await deleteOne(ctx, source.bucket, obj.key);
        return result.size;
      });
    }
    if (sync && args.delete && remote) {
      requireWholeListing(sourceListing, source);
      await deleteRemote(session, batch, dest.bucket, destPrefix, [...remote.keys()].filter((rel) => !seen.has(rel) && isIncluded(filters, rel)), args.dryrun);
    }
  } else {
    throw new UsageError(`${mode} needs a local directory and an s3:// prefix, or two s3:// prefixes (got ${formatLocation(source)} and ${formatLocation(dest)})`);
  }

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
 * A listing's objects, page by page. `read.whole` turns true only once the
 * listing has been read to its end, every page checked on the way
 * (s3/list.ts checkListingPage, engine/listing.ts key order).
 */
function listing(session: Session, bucket: string, prefix: string, read: { whole: boolean } = { whole: false }): AsyncGenerator<ListedObject> {
  const ctx = session.context;
  return (async function* () {
    for await (const page of listObjectPages(ctx, bucket, prefix)) yield* page.objects;
    read.whole = true;
  })();
}

/** sync --delete decides from the source's listing: only a listing read whole may delete anything. */
function requireWholeListing(read: { whole: boolean }, source: Location): void {
  if (!read.whole) throw new Error(`sync --delete: the listing of ${formatLocation(source)} was not read to its end; nothing was deleted`);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The destination side of a sync: relative path → size and time. */
async function listAll(session: Session, bucket: string, prefix: string): Promise<Map<string, EntryState>> {
  const map = new Map<string, EntryState>();
  for await (const obj of listing(session, bucket, prefix)) {
    if (obj.key.endsWith("/")) continue;
    map.set(obj.key.slice(prefix.length), { size: obj.size, mtimeMs: obj.lastModified.getTime() });
  }
  return map;
}

/** sync --delete on S3: DeleteObjects in batches of 1,000, sent concurrently. */
async function deleteRemote(session: Session, batch: ObjectBatch, bucket: string, prefix: string, relativeKeys: string[], dryrun: boolean): Promise<void> {
  const keys = relativeKeys.map((rel) => prefix + rel);
  if (dryrun) {
    for (const key of keys) batch.record({ action: "delete", source: `s3://${bucket}/${key}`, destination: "", size: 0, status: "dryrun" });
    return;
  }
  await deleteKeys(session.context, bucket, keys, (result) => batch.record(result));
}

async function deleteLocal(batch: ObjectBatch, root: string, shownRoot: string, seen: Set<string>, filters: FilterSet, dryrun: boolean): Promise<void> {
  for await (const entry of walkFiles(root, { followSymlinks: false, onProblem: () => undefined })) {
    if (seen.has(entry.relativePath) || !isIncluded(filters, entry.relativePath)) continue;
    const shown = join(shownRoot, entry.relativePath);
    if (dryrun) {
      batch.record({ action: "delete", source: shown, destination: "", size: 0, status: "dryrun" });
      continue;
    }
    await unlink(entry.absolutePath).then(
      () => batch.record({ action: "delete", source: shown, destination: "", size: 0, status: "ok" }),
      (error: unknown) => batch.record({ action: "delete", source: shown, destination: "", size: 0, status: "failed", error }),
    );
  }
}


/** What an S3→S3 copy sets on its destination: new attributes (REPLACE) or the source's, with the ACL and encryption given. */
function objectAttributesOf(args: SetArgs): (key: string) => Promise<Pick<CopyOptions, "attributes" | "storage">> {
  const replace = replacesMetadata(args);
  const storage = storageSettings(args);
  return async (key) => ({ attributes: replace ? await objectAttributes(args, key) : undefined, storage });
}
