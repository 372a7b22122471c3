import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import { constants, open as openCallback, writeSync } from "node:fs";
import { promisify } from "node:util";
import { join } from "node:path";
import type { ObjectIdentity } from "./download-sink.js";
import { ForeignWorkingFileError, openOwnWorkingFile, PRIVATE_MODE } from "./working-files.js";

/** A byte range [offset, offset + length) of the object. */
export interface Range {
  offset: number;
  length: number;
}

/**
 * The file-system calls a download sink makes by path (handles carry the
 * rest: write, datasync, sync, close). Injected so a test can record the
 * order of writes, syncs and renames without timing anything.
 */
export interface SinkFileSystem {
  open(path: string, flags: string | number, mode?: number): Promise<FileHandle>;
  /** An open through the thread pool that gives a plain descriptor (for blocking calls after it). */
  openFd(path: string, flags: string, mode?: number): Promise<number>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** fsync of a directory: makes the names created or renamed in it durable. */
  syncDirectory(path: string): Promise<void>;
  /** A blocking positional write (fs.writeSync): the bytes written. */
  writeSync(fd: number, data: Uint8Array, offset: number, length: number, position: number): number;
}

const openFd = promisify(openCallback);

export const nodeFileSystem: SinkFileSystem = {
  open: (path, flags, mode) => open(path, flags, mode),
  openFd: (path, flags, mode) => openFd(path, flags, mode),
  rename,
  unlink,
  writeSync,
  async syncDirectory(path) {
    const handle = await open(path, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/** What a journal says: the object, the ranges on disk, and the temporary file holding them. */
export interface JournalContents {
  identity: ObjectIdentity;
  done: Range[];
  /** The temporary file's full path. */
  temp: string;
}

/** The first line of a journal: the object's identity and (version 2) the run's temporary file. */
export function journalHeader(identity: ObjectIdentity, tempName: string): string {
  return JSON.stringify({ version: 2, etag: identity.etag, size: identity.size, temp: tempName }) + "\n";
}

/**
 * Reads a journal: undefined when there is none, "unreadable" when its
 * header does not parse. A version-1 journal (no `temp`) belongs to the
 * fixed temporary name earlier releases used, `legacyTemp`. Lines after the
 * header were appended only once their bytes were on disk; the last one may
 * be torn by a kill mid-append and is ignored.
 */
export async function readJournal(journalPath: string, directory: string, legacyTemp: string): Promise<JournalContents | "unreadable" | undefined> {
  let text: string;
  try {
    // Only a journal s3x made (a regular file of this user, not followed through a link): see working-files.ts.
    const handle = await openOwnWorkingFile(journalPath, constants.O_RDONLY);
    try {
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (code === "EACCES" || code === "EPERM") throw new ForeignWorkingFileError(journalPath, "cannot be read by this user");
    throw err;
  }
  const lines = text.split("\n");
  let header: { etag?: unknown; size?: unknown; temp?: unknown };
  try {
    header = JSON.parse(lines[0] ?? "") as typeof header;
  } catch {
    return "unreadable";
  }
  if (typeof header.etag !== "string" || typeof header.size !== "number") return "unreadable";
  // Only a base name is honoured: a journal never points outside its directory.
  const temp = typeof header.temp === "string" && header.temp !== "" && !/[/\\]/.test(header.temp) ? join(directory, header.temp) : legacyTemp;
  const done: Range[] = [];
  for (const line of lines.slice(1)) {
    try {
      const entry = JSON.parse(line) as { o?: unknown; n?: unknown };
      if (typeof entry.o === "number" && typeof entry.n === "number") done.push({ offset: entry.o, length: entry.n });
    } catch {
      // torn line
    }
  }
  return { identity: { etag: header.etag, size: header.size }, done, temp };
}


/**
 * Creates a journal holding `header`; when one exists (a leftover this run,
 * holding the lock, chose not to continue), `replace()` removes it first. A header that cannot be written (a full disk) leaves the journal
 * closed, for the sink's clean-up to remove.
 */
export async function createJournal(fs: SinkFileSystem, path: string, header: string, replace: () => Promise<void>): Promise<FileHandle> {
  const journal = await fs.open(path, "wx", PRIVATE_MODE).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== "EEXIST") throw err;
    await replace();
    return fs.open(path, "wx", PRIVATE_MODE);
  });
  try {
    await journal.write(header);
  } catch (err) {
    await journal.close();
    throw err;
  }
  return journal;
}

/** When journal lines are made durable: after this many bytes are waiting, or this long after the first. */
export interface FlushPolicy {
  bytes: number;
  ms: number;
}

/**
 * One fdatasync of the data per batch, not per range: a 1 GiB download in
 * 1 MiB slices would otherwise pay a thousand syncs. Killed between two
 * batches, a run loses at most this much of its resume point.
 */
export const DEFAULT_FLUSH: FlushPolicy = { bytes: 32 * 1024 * 1024, ms: 500 };

/**
 * Appends journal lines in the only order that survives a power loss: the
 * data's fdatasync first, then the lines that vouch for it, then the
 * journal's fdatasync (and, before the first lines, an fsync of the
 * directory, so the temporary file a line vouches for is there after a
 * crash too). Lines wait in memory and go out in batches (FlushPolicy);
 * flushes run one at a time beside the writes, never holding them up.
 */
export class JournalWriter {
  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private queued = false;
  private flushing: Promise<void> = Promise.resolve();
  private directorySynced = false;
  /** The first flush failure (EIO, ENOSPC): the download fails with it. */
  failure: Error | undefined;

  constructor(
    private readonly data: FileHandle,
    readonly journal: FileHandle,
    private readonly directory: string,
    private readonly fs: SinkFileSystem,
    private readonly policy: FlushPolicy = DEFAULT_FLUSH,
  ) {}

  /** Range [offset, offset + length) was written (its write call returned): journal it in the next batch. */
  record(offset: number, length: number): void {
    this.pending.push(`{"o":${offset},"n":${length}}\n`);
    this.pendingBytes += length;
    if (this.pendingBytes >= this.policy.bytes) this.flushLater();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flushLater(), this.policy.ms);
      this.timer.unref();
    }
  }

  /** Makes every range recorded so far durable and journaled; resolves once it is (or rejects with the failure). */
  flush(): Promise<void> {
    if (!this.queued) {
      this.queued = true;
      this.flushing = this.flushing.then(() => this.flushNow());
      // A failure is kept in `failure` and reported by whoever waits next.
      this.flushing.catch(() => undefined);
    }
    return this.flushing.then(() => {
      if (this.failure) throw this.failure;
    });
  }

  /** A flush nobody waits for: its failure is kept for the next write or the commit. */
  private flushLater(): void {
    this.flush().catch(() => undefined);
  }

  /** Waits for a flush in progress and drops lines not yet flushed (the file is about to be published or removed). */
  async settle(): Promise<void> {
    this.stopTimer();
    this.pending = [];
    this.pendingBytes = 0;
    await this.flushing.catch(() => undefined);
  }

  private async flushNow(): Promise<void> {
    this.queued = false;
    this.stopTimer();
    const lines = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (lines.length === 0 || this.failure) return;
    try {
      await this.data.datasync();
      if (!this.directorySynced) {
        await this.fs.syncDirectory(this.directory);
        this.directorySynced = true;
      }
      await this.journal.write(lines.join(""));
      await this.journal.datasync();
    } catch (err) {
      this.failure = err as Error;
    }
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
