import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isFolderMarker } from "../plan/keys.js";
import { UsageError } from "../plan/location.js";
import { placeInDirectory, placeUnderPrefix, type LocalTarget, type PrefixTarget } from "../plan/placement.js";
import type { DestinationEntry, Placement, SetDestination, SetEntry, SetSource, SourceItem, SourceProblem } from "../plan/set-plan.js";
import type { EntryState } from "../plan/sync.js";
import type { ObjectRef } from "../s3/operations.js";
import type { TransferContext } from "./context.js";
import { headWithRetries } from "./download/range-fetch.js";
import { makeDirectories } from "./local-directories.js";
import { listObjectPages } from "./listing.js";
import { RequestError } from "./retry.js";
import { PathStats, walkFiles } from "./walk.js";

/**
 * The ends of a set transfer, implementing plan/set-plan.ts's Source and
 * Destination over the real things: a local directory walked (engine/walk),
 * an S3 prefix listed (engine/listing). The planner decides; these only read.
 */

/**
 * Local stats may block the event loop while no request is queued or
 * running (a sync gathering both sides, a copy's first files): engine/walk.
 */
function nothingInFlight(ctx: TransferContext): () => boolean {
  return () => ctx.queue.pending === 0 && ctx.queue.size === 0;
}

/** The files under a local directory; an entry's ref is its path. */
export class LocalTreeSource implements SetSource<string> {
  readonly side = "local";
  whole = false;

  private constructor(
    private readonly ctx: TransferContext,
    /** The directory as the user wrote it. */
    readonly name: string,
    private readonly followSymlinks: boolean,
  ) {}

  /** Checks that `path` is a directory (a file or a missing path is the user's mistake, said before anything is sent). */
  static async open(ctx: TransferContext, path: string, followSymlinks: boolean): Promise<LocalTreeSource> {
    const info = await stat(path);
    if (!info.isDirectory()) throw new UsageError(`${path} is not a directory`);
    return new LocalTreeSource(ctx, path, followSymlinks);
  }

  async *items(): AsyncGenerator<SourceItem<string>> {
    const problems: SourceProblem[] = [];
    const walk = walkFiles(this.name, {
      followSymlinks: this.followSymlinks,
      onProblem: (p) => problems.push({ shown: join(this.name, p.relativePath), message: p.message, relativePath: p.relativePath, skipped: p.skipped }),
      mayBlock: nothingInFlight(this.ctx),
    });
    for await (const file of walk) {
      for (const problem of problems.splice(0)) yield { problem };
      yield { entry: { relativePath: file.relativePath, size: file.size, mtimeMs: file.mtimeMs, ref: file.absolutePath } };
    }
    for (const problem of problems.splice(0)) yield { problem };
    this.whole = true;
  }

  shown(entry: SetEntry<string>): string {
    return join(this.name, entry.relativePath);
  }

  described(entry: SetEntry<string>): string {
    return `file "${entry.ref}"`;
  }
}

/**
 * The objects under an S3 prefix, as listed (every page checked:
 * engine/listing). Folder markers are skipped, as aws-cli's cp, mv and sync
 * do: they hold no data, and as files they would have no name.
 */
export class S3PrefixSource implements SetSource<ObjectRef> {
  readonly side = "s3";
  whole = false;

  constructor(
    private readonly ctx: TransferContext,
    private readonly bucket: string,
    /** A directory prefix: empty or ending in "/". */
    private readonly prefix: string,
    readonly name: string,
    /** rm -r deletes folder markers too; transfers skip them. */
    private readonly withFolderMarkers = false,
  ) {}

  async *items(): AsyncGenerator<SourceItem<ObjectRef>> {
    for await (const page of listObjectPages(this.ctx, this.bucket, this.prefix)) {
      for (const obj of page.objects) {
        if (!this.withFolderMarkers && isFolderMarker(obj)) continue;
        yield { entry: { relativePath: obj.key.slice(this.prefix.length), size: obj.size, mtimeMs: obj.lastModified.getTime(), ref: { bucket: this.bucket, key: obj.key } } };
      }
    }
    this.whole = true;
  }

  shown(entry: SetEntry<ObjectRef>): string {
    return `s3://${entry.ref.bucket}/${entry.ref.key}`;
  }

  described(entry: SetEntry<ObjectRef>): string {
    return `key "${entry.ref.key}"`;
  }
}

/** An object named on its own (a manifest's line, or `cat s3://bucket/key`). */
export interface NamedObject {
  bucket: string;
  key: string;
  /** Where it lands under a destination directory or prefix. */
  relativePath: string;
  /** The manifest line that names it, for messages. */
  line?: number;
}

/** How many HEAD requests a list of named objects sends at once (and runs ahead of the entries handed out). */
const HEADS_IN_FLIGHT = 64;

/**
 * How a list of named objects learns their sizes and times (each a HEAD):
 * "as-reached" hands each entry out as soon as its HEAD and those before it
 * answered, so the first transfer starts at once and a missing object is
 * a problem in its place (a stream stops there); "check-first" HEADs all
 * of them before the first entry, and a missing one fails the command
 * before anything moves (--check-manifest).
 */
export type NamedObjectsCheck = "as-reached" | "check-first";

/** A named object that is not there (404) or not ours to read (403): an S3 answer, so exit status 1, not a usage error. */
/**
 * The MissingObjectError a request's failure stands for when it was a 404
 * or a 403 (else undefined), naming the manifest line (`where`) or, for an
 * object named on the command line, hinting that a prefix ends in "/".
 */
export function missingObjectError(err: unknown, ref: ObjectRef, where?: string): MissingObjectError | undefined {
  if (!(err instanceof RequestError) || (err.failure.status !== 404 && err.failure.status !== 403)) return undefined;
  const absent = err.failure.status === 404;
  // One object named on the command line may have been meant as a prefix.
  const hint = where === undefined && absent ? ` (for every object under a prefix, end it with "/")` : "";
  return new MissingObjectError(`${where !== undefined ? `${where}: ` : ""}s3://${ref.bucket}/${ref.key}: ${absent ? "no such object" : "access denied"}${hint}`, ref, absent);
}

export class MissingObjectError extends Error {
  constructor(
    message: string,
    readonly ref: ObjectRef,
    /** 404: no such object (403 is access denied: whether it exists is not known). */
    readonly absent: boolean,
  ) {
    super(message);
  }
}

/**
 * Objects named one by one (a manifest, or one object), in the order given,
 * their sizes and times from HEAD requests (see NamedObjectsCheck).
 */
/** What a list of named objects yields: an entry, or the problem of a missing or forbidden object (its error says which). */
export type NamedItem = { entry: SetEntry<ObjectRef> } | { problem: SourceProblem & { error: MissingObjectError } };

export class NamedObjectsSource implements SetSource<ObjectRef> {
  readonly side = "s3";
  whole = false;

  constructor(
    private readonly ctx: TransferContext,
    private readonly objects: readonly NamedObject[],
    /** The manifest as the user named it ("manifest.txt", "stdin"), or the object's URL. */
    readonly name: string,
    private readonly check: NamedObjectsCheck = "as-reached",
  ) {}

  async *items(): AsyncGenerator<NamedItem> {
    // HEADs still in flight when the items stop being read (a missing object, a stopped stream) are cancelled, not waited for.
    const stopped = new AbortController();
    const signal = AbortSignal.any([this.ctx.signal, stopped.signal]);
    try {
      yield* this.lookUps(signal);
    } finally {
      stopped.abort(new Error("the objects are no longer read"));
    }
    this.whole = true;
  }

  private async *lookUps(signal: AbortSignal): AsyncGenerator<NamedItem> {
    if (this.check === "check-first") {
      const entries: SetEntry<ObjectRef>[] = new Array(this.objects.length);
      let next = 0;
      let failed = false;
      const worker = async (): Promise<void> => {
        // After the first missing object no more HEADs: the command stops anyway.
        while (next < this.objects.length && !failed) {
          const i = next++;
          const item = await this.lookUp(this.objects[i]!, signal);
          if ("problem" in item) {
            failed = true;
            throw item.problem.error;
          }
          entries[i] = item.entry;
        }
      };
      await Promise.all(Array.from({ length: Math.min(HEADS_IN_FLIGHT, this.objects.length) }, worker));
      for (const entry of entries) yield { entry };
    } else {
      // In order, each HEAD sent up to HEADS_IN_FLIGHT entries ahead of the one handed out.
      const ahead: Promise<NamedItem>[] = [];
      let next = 0;
      while (next < this.objects.length || ahead.length > 0) {
        while (ahead.length < HEADS_IN_FLIGHT && next < this.objects.length) {
          const lookUp = this.lookUp(this.objects[next++]!, signal);
          lookUp.catch(() => undefined); // awaited in its turn below; not an unhandled rejection meanwhile
          ahead.push(lookUp);
        }
        yield await ahead.shift()!;
      }
    }
  }

  /** One object's entry, or a problem naming it (with its manifest line) when it is missing or forbidden. */
  private async lookUp(object: NamedObject, signal: AbortSignal): Promise<NamedItem> {
    const ref = { bucket: object.bucket, key: object.key };
    try {
      const info = await headWithRetries(this.ctx, ref, signal);
      return { entry: { relativePath: object.relativePath, size: info.size, mtimeMs: info.lastModified?.getTime() ?? 0, ref } };
    } catch (err) {
      const error = missingObjectError(err, ref, object.line !== undefined ? `${this.name}:${object.line}` : undefined);
      if (!error) throw err;
      return { problem: { shown: `s3://${ref.bucket}/${ref.key}`, message: error.message, relativePath: object.relativePath, absent: error.absent, error } };
    }
  }

  shown(entry: SetEntry<ObjectRef>): string {
    return `s3://${entry.ref.bucket}/${entry.ref.key}`;
  }

  described(entry: SetEntry<ObjectRef>): string {
    return `key "${entry.ref.key}"`;
  }
}

/** Where a streamed entry goes: nowhere but the stream, in the plan's order. */
export interface StreamTarget {
  relativePath: string;
}

/**
 * One byte stream (stdout, a named pipe): every entry goes to it in the
 * plan's order (engine/sinks/object-stream.ts); nothing there can be
 * compared or deleted.
 */
export class StreamDestination implements SetDestination<StreamTarget> {
  readonly side = "stream";

  constructor(private readonly shownAs: string) {}

  place(relativePath: string): Placement<StreamTarget> {
    return { ok: true, relativePath, target: { relativePath }, shown: this.shownAs };
  }

  async existing(): Promise<EntryState | undefined> {
    return undefined;
  }

  async *entries(): AsyncGenerator<DestinationEntry<StreamTarget>> {}
}

/** A local directory written into; keys are placed safely under it (plan/placement.ts). */
export class LocalTreeDestination implements SetDestination<LocalTarget> {
  readonly side = "local";
  private readonly stats: PathStats;

  private constructor(
    ctx: TransferContext,
    /** The directory, absolute. */
    readonly root: string,
    /** The directory as the user wrote it, for the output lines. */
    private readonly shownRoot: string,
  ) {
    this.stats = new PathStats(nothingInFlight(ctx));
  }

  /** Creates the directory (and its parents) if need be. */
  static async open(ctx: TransferContext, path: string): Promise<LocalTreeDestination> {
    const root = resolve(path);
    await makeDirectories(root);
    return new LocalTreeDestination(ctx, root, path);
  }

  place(relativePath: string, size: number): Placement<LocalTarget> {
    return placeInDirectory(this.root, this.shownRoot, relativePath, size);
  }

  /** The file at the target, stat'ed when asked: a download sync compares path by path instead of walking first. */
  async existing(placement: Placement<LocalTarget> & { ok: true }): Promise<EntryState | undefined> {
    const info = await this.stats.stat(placement.target.path);
    return info?.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : undefined;
  }

  /** The files under the directory (symlinks not followed: --delete never removes what a link points to). */
  async *entries(): AsyncGenerator<DestinationEntry<LocalTarget>> {
    for await (const file of walkFiles(this.root, { followSymlinks: false, onProblem: () => undefined })) {
      yield { relativePath: file.relativePath, target: { path: file.absolutePath }, shown: join(this.shownRoot, file.relativePath) };
    }
  }
}

/** An S3 prefix written into; compared against (sync) through one listing read before anything is decided. */
export class S3PrefixDestination implements SetDestination<PrefixTarget> {
  readonly side = "s3";
  /** Relative key → size and time, once prepared. */
  private held: Map<string, EntryState> | undefined;

  constructor(
    private readonly ctx: TransferContext,
    private readonly bucket: string,
    /** A directory prefix: empty or ending in "/". */
    private readonly prefix: string,
  ) {}

  place(relativePath: string): Placement<PrefixTarget> {
    return placeUnderPrefix(this.bucket, this.prefix, relativePath);
  }

  async prepare(): Promise<void> {
    const held = new Map<string, EntryState>();
    for await (const page of listObjectPages(this.ctx, this.bucket, this.prefix)) {
      for (const obj of page.objects) {
        if (obj.key.endsWith("/")) continue;
        held.set(obj.key.slice(this.prefix.length), { size: obj.size, mtimeMs: obj.lastModified.getTime() });
      }
    }
    this.held = held;
  }

  async existing(placement: Placement<PrefixTarget> & { ok: true }): Promise<EntryState | undefined> {
    return this.prepared().get(placement.relativePath);
  }

  async *entries(): AsyncGenerator<DestinationEntry<PrefixTarget>> {
    for (const relativePath of this.prepared().keys()) {
      const key = this.prefix + relativePath;
      yield { relativePath, target: { bucket: this.bucket, key }, shown: `s3://${this.bucket}/${key}` };
    }
  }

  /** The listing; deciding without it would treat every object as missing (and --delete would remove nothing it should). */
  private prepared(): Map<string, EntryState> {
    if (!this.held) throw new Error(`s3://${this.bucket}/${this.prefix} was not listed before it was compared`);
    return this.held;
  }
}
