import { open, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { asDirectoryPrefix } from "../plan/keys.js";
import type { Location } from "../plan/location.js";
import { downloadPartSize, streamedObjectPartSize, WHOLE_STREAMED_PARTS } from "../plan/parts.js";
import type { LocalTarget, PrefixTarget } from "../plan/placement.js";
import { planSet, type SetAction, type SetDestination, type SetEntry, type SetRules, type SetSource } from "../plan/set-plan.js";
import type { ChecksumAlgorithm, ObjectAttributes, ObjectRef, StorageSettings } from "../s3/operations.js";
import type { ObjectAction, ObjectBatch } from "./batch.js";
import type { TransferContext } from "./context.js";
import { copyS3Object } from "./copy.js";
import { deleteKeys, deleteOne } from "./delete.js";
import { downloadObject, downloadPartCount } from "./download.js";
import { makeDirectories } from "./local-directories.js";
import { s3Url } from "./object-url.js";
import { widenPipe } from "./pipe-size.js";
import { LocalTreeDestination, LocalTreeSource, NamedObjectsSource, S3PrefixDestination, S3PrefixSource, StreamDestination, type NamedObject, type StreamTarget } from "./set-ends.js";
import { FdWriter } from "./sinks/fd-writer.js";
import { ObjectStream, StreamStoppedError, type StreamFraming, type StreamProgress } from "./sinks/object-stream.js";
import { ReadAhead } from "./sinks/read-ahead.js";
import { orderedSource, type SetOrder } from "../plan/set-order.js";

export { StreamStoppedError, type StreamFraming, type StreamProgress } from "./sinks/object-stream.js";
import { writePolicies } from "./sinks/blocking-writes.js";
import { FileSink } from "./sinks/file-sink.js";
import { LeftoverIndex } from "./sinks/leftover-index.js";
import { forgetFinishedUploads, uploadFile } from "./upload.js";

/**
 * Runs a set transfer (cp -r, mv -r, sync): plan/set-plan.ts decides, over
 * the ends of engine/set-ends.ts, and this executes each action it yields
 * as it comes, so transfers start while the source is still listed. The
 * CLI hands down plain option values and the rules; nothing here parses or
 * prints (results go to the batch's listener).
 */

/** What a set transfer needs beyond the rules, as plain values. */
export interface SetOptions {
  /** mv: each source goes once its copy is complete; a failed copy removes nothing. */
  move: boolean;
  followSymlinks: boolean;
  partSize?: number;
  multipartThreshold: number;
  /** S3→S3 copies only. */
  copyThreshold?: number;
  keepFailedUploads: boolean;
  checksum?: ChecksumAlgorithm;
  checksumRequested: boolean;
  /** The endpoint's identity in local resume records. */
  endpoint: string;
  resume: boolean;
  verifyEtag: boolean;
  dryrun: boolean;
  /** What an uploaded file's object carries (from its relative path, for the Content-Type, and its mtime). */
  uploadAttributes(relativePath: string, mtimeMs: number): Promise<ObjectAttributes>;
  /** What an S3→S3 copy sets: new attributes (REPLACE) or undefined to keep the source's, and ACL and encryption. */
  copyAttributes(key: string): Promise<{ attributes?: ObjectAttributes; mergeWithSource?: boolean; storage?: StorageSettings }>;
  /** A stream destination (stdout, a named pipe): the objects' bytes raw, one after another, or as a tar archive. */
  framing?: StreamFraming;
  /** The order the source's entries are taken in, and which of them this worker takes (plan/set-order.ts). */
  order?: SetOrder;
}

/** Where a set's entries come from: a directory or prefix, or objects named one by one (a manifest). */
export type SetSourceSpec = Location | { kind: "named"; objects: readonly NamedObject[]; name: string; checkFirst?: boolean };

/** How one direction transfers an entry, removes a moved source and deletes from its destination. */
interface SetOperations<Ref, Target> {
  /** The action an entry's line names ("move" replaces it for a transfer of mv). */
  action: ObjectAction;
  transfer(entry: SetEntry<Ref>, target: Target): Promise<number>;
  removeSource(entry: SetEntry<Ref>): Promise<void>;
  /** mv: the source goes once its copy is complete. */
  move: boolean;
  /** After a skip: cp --resume forgets the finished upload's record. */
  skipped?(target: Target): Promise<void>;
  /** How --delete removes from this destination, its results recorded in `batch`. */
  deleter(batch: ObjectBatch): Deleter<Target>;
  /** After every action's transfer ended (a stream writes its end); `complete`: the plan was read to its end. */
  finish?(batch: ObjectBatch, complete: boolean): Promise<void>;
  /** A stream destination: how far it got. */
  progress?(): StreamProgress;
  /** A stream destination: resolves once a failed stream stopped (the objects before the failed one written). */
  stopped?(): Promise<void>;
  /** An entry refused before its transfer (a manifest's missing object): a stream ends at its place. */
  refused?(shown: string, error: Error): void;
}

/** sync --delete on one kind of destination: files one by one, keys in batches at the end. */
interface Deleter<Target> {
  add(target: Target, shown: string): Promise<void>;
  finish(): Promise<void>;
}

/** A set transfer between two opened ends, ready to run. */
export interface SetRun {
  run(rules: SetRules, batch: ObjectBatch, onQueued: () => void): Promise<void>;
  /** A stream destination: the objects written whole so far. */
  streamProgress?(): StreamProgress;
  /** A stream destination: resolves once a failed stream stopped, every object before the failed one written. */
  streamStopped?(): Promise<void>;
}

/**
 * Opens both ends of a set transfer (checks the local source is a
 * directory, creates the local destination) and picks the direction's
 * operations. Local to local is not a transfer s3x makes: the CLI refuses it first.
 */
export async function openSet(ctx: TransferContext, sourceSpec: SetSourceSpec, dest: Location, options: SetOptions): Promise<SetRun> {
  const source = sourceSpec.kind === "named" ? undefined : sourceSpec;
  if (sourceSpec.kind === "named" || sourceSpec.kind === "s3") {
    const stream = await streamOf(dest);
    if (stream) {
      const from = sourceSpec.kind === "named" ? namedSource(ctx, sourceSpec) : prefixSource(ctx, sourceSpec);
      return bind(from, new StreamDestination("-"), streamed(ctx, options, stream), options.order);
    }
    if (sourceSpec.kind === "named") {
      const from = namedSource(ctx, sourceSpec);
      if (dest.kind === "local") {
        const to = await LocalTreeDestination.open(ctx, dest.path);
        return bind(from, to, downloads(ctx, options, to.root), options.order);
      }
      if (dest.kind === "s3") return bind(from, new S3PrefixDestination(ctx, dest.bucket, asDirectoryPrefix(dest.key)), copies(ctx, options, remoteDeleter(ctx, dest.bucket)), options.order);
    }
  }
  if (!source) throw new Error(`no set transfer from a list of objects to ${dest.kind}`);
  if (source.kind === "local" && dest.kind === "s3") {
    const from = await LocalTreeSource.open(ctx, source.path, options.followSymlinks);
    const to = new S3PrefixDestination(ctx, dest.bucket, asDirectoryPrefix(dest.key));
    return bind(from, to, uploads(ctx, options, remoteDeleter(ctx, dest.bucket)), options.order);
  }
  if (source.kind === "s3" && dest.kind === "local") {
    const to = await LocalTreeDestination.open(ctx, dest.path);
    return bind(prefixSource(ctx, source), to, downloads(ctx, options, to.root), options.order);
  }
  if (source.kind === "s3" && dest.kind === "s3") {
    const to = new S3PrefixDestination(ctx, dest.bucket, asDirectoryPrefix(dest.key));
    return bind(prefixSource(ctx, source), to, copies(ctx, options, remoteDeleter(ctx, dest.bucket)), options.order);
  }
  throw new Error(`no set transfer from ${source.kind} to ${dest.kind}`);
}

/** A manifest's objects, each HEADed as it is reached, or all before anything moves (--check-manifest). */
function namedSource(ctx: TransferContext, spec: SetSourceSpec & { kind: "named" }): NamedObjectsSource {
  return new NamedObjectsSource(ctx, spec.objects, spec.name, spec.checkFirst ? "check-first" : "as-reached");
}

function prefixSource(ctx: TransferContext, source: Location & { kind: "s3" }): S3PrefixSource {
  return new S3PrefixSource(ctx, source.bucket, asDirectoryPrefix(source.key), `s3://${source.bucket}/${source.key}`);
}

function bind<Ref, Target>(source: SetSource<Ref>, destination: SetDestination<Target>, operations: SetOperations<Ref, Target>, order: SetOrder | undefined): SetRun {
  const ordered = order ? orderedSource(source, order) : source;
  return { run: (rules, batch, onQueued) => execute(planSet(ordered, destination, rules), operations, batch, onQueued), streamProgress: operations.progress, streamStopped: operations.stopped };
}

/** Each action, in the plan's order; transfers run in the batch's slots, the rest is recorded at once. */
async function execute<Ref, Target>(actions: AsyncIterable<SetAction<Ref, Target>>, ops: SetOperations<Ref, Target>, batch: ObjectBatch, onQueued: () => void): Promise<void> {
  const deleter = ops.deleter(batch);
  let complete = false;
  try {
    await submitAll(actions, ops, batch, deleter, onQueued);
    await deleter.finish();
    complete = true;
  } catch (err) {
    // The plan failed part-way (a listing page that cannot be trusted): the objects already
    // under way, from the pages before, finish and are reported before the command ends and
    // closes its connections under them. Nothing is deleted.
    await batch.finish();
    throw err;
  } finally {
    // Even when the plan failed: a stream must not be left looking whole.
    await ops.finish?.(batch, complete);
  }
}

async function submitAll<Ref, Target>(
  actions: AsyncIterable<SetAction<Ref, Target>>,
  ops: SetOperations<Ref, Target>,
  batch: ObjectBatch,
  deleter: Deleter<Target>,
  onQueued: () => void,
): Promise<void> {
  const { move } = ops;
  for await (const action of actions) {
    switch (action.kind) {
      case "refuse":
        ops.refused?.(action.source, action.error);
        batch.record({ action: ops.action, source: action.source, destination: action.destination, size: action.size, status: "failed", error: action.error });
        break;
      case "warn":
        batch.record({ action: ops.action, source: action.source, destination: "", size: 0, status: "skipped", warning: action.warning });
        break;
      case "skip":
        await ops.skipped?.(action.target);
        batch.record({ action: ops.action, source: action.source, destination: action.destination, size: action.entry.size, status: "skipped" });
        break;
      case "transfer": {
        const item = { action: move ? ("move" as const) : ops.action, source: action.source, destination: action.destination, size: action.entry.size };
        if (action.dryrun) {
          batch.record({ ...item, status: "dryrun" });
          break;
        }
        onQueued();
        const { entry, target } = action;
        await batch.submit(item, async () => {
          const size = await ops.transfer(entry, target);
          if (move) await ops.removeSource(entry);
          return size;
        });
        break;
      }
      case "delete":
        if (action.dryrun) batch.record({ action: "delete", source: action.shown, destination: "", size: 0, status: "dryrun" });
        else await deleter.add(action.target, action.shown);
        break;
    }
  }
}

function uploads(ctx: TransferContext, options: SetOptions, deleter: (batch: ObjectBatch) => Deleter<PrefixTarget>): SetOperations<string, PrefixTarget> {
  return {
    action: "upload",
    move: options.move,
    async transfer(entry, target) {
      const result = await uploadFile(ctx, entry.ref, target, {
        multipartThreshold: options.multipartThreshold,
        partSize: options.partSize,
        attributes: await options.uploadAttributes(entry.relativePath, entry.mtimeMs),
        keepFailedUpload: options.keepFailedUploads,
        checksum: options.checksum,
        checksumRequested: options.checksumRequested,
        resumable: { endpoint: options.endpoint, resume: options.resume },
      });
      return result.size;
    },
    removeSource: (entry) => unlink(entry.ref),
    skipped: options.resume && !options.dryrun ? (target) => forgetFinishedUploads(ctx, options.endpoint, target) : undefined,
    deleter,
  };
}

function downloads(ctx: TransferContext, options: SetOptions, root: string): SetOperations<ObjectRef, LocalTarget> {
  // Thousands of objects share a few directories: create each once per run.
  const madeDirectories = new Set<string>([root]);
  const leftovers = new LeftoverIndex();
  const writes = writePolicies();
  return {
    action: "download",
    move: options.move,
    async transfer(entry, target) {
      const parent = dirname(target.path);
      if (!madeDirectories.has(parent)) {
        await makeDirectories(parent).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "EEXIST" && err.code !== "ENOTDIR") throw err;
          throw new Error(`${parent}: a file of the same name is in the way (the key clashes with another key)`);
        });
        madeDirectories.add(parent);
      }
      const sink = new FileSink(target.path, leftovers, writes);
      const result = await downloadObject(ctx, entry.ref, sink, downloadPartSize(options.partSize), entry.size, { resume: options.resume, verifyEtag: options.verifyEtag }).catch((err: unknown) => {
        throw keyPrefixClash(err, target.path, madeDirectories) ?? err;
      });
      return result.size;
    },
    removeSource: (entry) => deleteOne(ctx, entry.ref.bucket, entry.ref.key),
    // A run killed between its rename and its journal's removal left a stale journal beside a finished file.
    // Only where the directory holds a journal for it: a no-op sync of thousands of files builds no sink.
    skipped: options.dryrun
      ? undefined
      : async (target) => {
          if (await leftovers.mayHaveJournal(target.path)) await new FileSink(target.path).dropStaleJournal();
        },
    deleter: localDeleter,
  };
}

/**
 * A local directory in a download's way that this run made for the keys
 * under a prefix of the same name ("a" and "a/x" both listed): said so, as
 * the user's own directory would not be.
 */
function keyPrefixClash(err: unknown, path: string, madeDirectories: ReadonlySet<string>): Error | undefined {
  if ((err as NodeJS.ErrnoException).code !== "S3X_PATH_CLASH") return undefined;
  const under = `${path}/`;
  if (![...madeDirectories].some((made) => made === path || made.startsWith(under))) return undefined;
  return Object.assign(new Error(`${(err as Error).message} (the key clashes with a prefix: this download made the directory for the keys under it)`), { code: "S3X_PATH_CLASH" });
}

/** Where a stream destination writes: stdout (-), or a named pipe or device given as the destination path. */
interface OpenStream {
  writer: FdWriter;
  close(): Promise<void>;
}

async function streamOf(dest: Location): Promise<OpenStream | undefined> {
  if (dest.kind === "stream") {
    widenPipe(1);
    return { writer: new FdWriter(1, () => process.stdout), close: async () => undefined };
  }
  if (dest.kind !== "local") return undefined;
  const info = await stat(dest.path).catch(() => undefined);
  if (!info || info.isFile() || info.isDirectory()) return undefined;
  // A FIFO (SageMaker Pipe mode's way) or a device: written in order, in place.
  const handle = await open(dest.path, "w");
  widenPipe(handle.fd);
  return { writer: new FdWriter(handle.fd), close: () => handle.close() };
}

/**
 * Every object into one stream, in the plan's order. The stream's pieces are
 * numbered from each object's listed size when its transfer starts: the
 * batch starts transfers in the plan's order, so the objects appear in it.
 */
function streamed(ctx: TransferContext, options: SetOptions, stream: OpenStream): SetOperations<ObjectRef, StreamTarget> {
  const partSize = downloadPartSize(options.partSize);
  const partSizeOf = (size: number): number => streamedObjectPartSize(size, partSize);
  // Parts the downloads may run ahead of the reader: as few as keep it fed (ReadAhead), at most
  // the bytes of every connection busy with a part (plus four), and never more than half the
  // memory budget; counted in parts of the largest size, a whole object of WHOLE_STREAMED_PARTS parts.
  const window = new ReadAhead(
    Math.max(2, Math.min(Math.floor((ctx.queue.concurrency + 4) / WHOLE_STREAMED_PARTS), Math.floor(ctx.memory.limit / (WHOLE_STREAMED_PARTS * partSize) / 2))),
  );
  const objects = new ObjectStream(stream.writer, options.framing ?? "raw", window, (size) => downloadPartCount(size, partSizeOf(size)));
  return {
    action: "download",
    move: false,
    async transfer(entry) {
      const sink = objects.next({ name: entry.ref.key, shown: s3Url(entry.ref), size: entry.size, mtimeMs: entry.mtimeMs });
      const result = await downloadObject(ctx, entry.ref, sink, partSizeOf(entry.size), entry.size, { verifyEtag: options.verifyEtag });
      return result.size;
    },
    removeSource: async () => {
      throw new Error("a stream destination does not move objects");
    },
    deleter: () => ({ add: async () => undefined, finish: async () => undefined }),
    async finish(batch, complete) {
      try {
        await batch.finish();
        // A dry run wrote nothing: no tar end either (its lines went to stdout).
        if (options.dryrun) return;
        if (complete && !ctx.signal.aborted && batch.summary.failed === 0) await objects.finish();
        else await objects.failed(ctx.signal.aborted ? String((ctx.signal.reason as Error | undefined)?.message ?? ctx.signal.reason) : `${batch.summary.failed} objects failed`);
      } finally {
        await stream.close();
      }
    },
    progress: () => objects.progress(),
    stopped: () => objects.stopped(),
    refused: (shown, error) => objects.failFrom(shown, new StreamStoppedError(`the stream stopped at ${shown}: ${error.message}`)),
  };
}

function copies(ctx: TransferContext, options: SetOptions, deleter: (batch: ObjectBatch) => Deleter<PrefixTarget>): SetOperations<ObjectRef, PrefixTarget> {
  const copyThreshold = options.copyThreshold;
  if (copyThreshold === undefined) throw new Error("an S3→S3 set copy needs its copy threshold");
  return {
    action: "copy",
    move: options.move,
    async transfer(entry, target) {
      const settings = await options.copyAttributes(target.key);
      const result = await copyS3Object(ctx, entry.ref, target, { partSize: options.partSize, copyThreshold, keepFailedUpload: options.keepFailedUploads, listedSize: entry.size, ...settings });
      return result.size;
    },
    removeSource: (entry) => deleteOne(ctx, entry.ref.bucket, entry.ref.key),
    deleter,
  };
}

/** sync --delete on S3: the keys gathered, then DeleteObjects in batches of 1,000 sent concurrently (engine/delete). */
function remoteDeleter(ctx: TransferContext, bucket: string): (batch: ObjectBatch) => Deleter<PrefixTarget> {
  return (batch) => {
    const keys: string[] = [];
    return {
      add: async (target) => void keys.push(target.key),
      finish: () => deleteKeys(ctx, bucket, keys, (result) => batch.record(result)),
    };
  };
}

/** sync --delete on a local directory: each file unlinked as the walk finds it. */
function localDeleter(batch: ObjectBatch): Deleter<LocalTarget> {
  return {
    add: (target, shown) =>
      unlink(target.path).then(
        () => batch.record({ action: "delete", source: shown, destination: "", size: 0, status: "ok" }),
        (error: unknown) => batch.record({ action: "delete", source: shown, destination: "", size: 0, status: "failed", error }),
      ),
    finish: async () => undefined,
  };
}
