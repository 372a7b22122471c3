import { closeSync, futimesSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { open, readFile, rename, unlink, utimes, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { DownloadSink, ObjectIdentity, PartialDownload } from "./download-sink.js";
import type { BlockingWrites } from "./blocking-writes.js";
import { JOURNAL_SUFFIX, type LeftoverIndex } from "./leftover-index.js";

/** A byte range [offset, offset + length) of the object. */
interface Range {
  offset: number;
  length: number;
}

/**
 * Writes parts at their offsets into a temporary file beside the destination
 * and renames it over the destination only when every byte has arrived, so a
 * failed or interrupted download never leaves a half-written file under the
 * final name (and a rename within one directory is atomic).
 *
 * Beside the temporary file a journal records which ranges are on disk: a
 * header line with the object's identity (ETag, size) and one line per range
 * written, appended only after its bytes were written. A download killed at
 * any point (even kill -9) leaves both behind; `--resume` reads the journal
 * and fetches only what is missing. Both names are fixed per destination
 * (`.NAME.s3x-part`, `.NAME.s3x-part.journal`) so the next run finds them.
 *
 * An object that arrived in one response (a small file) has nothing to
 * resume and gets no journal; given a BlockingWrites policy, its file is
 * written with blocking calls while they are fast (see blocking-writes.ts).
 */
export class FileSink implements DownloadSink {
  readonly tempPath: string;
  readonly journalPath: string;
  private handle: FileHandle | undefined;
  private journal: FileHandle | undefined;
  private closed = false;
  private wroteAny = false;
  /**
   * The write in progress: writes into one file go one at a time. Buffered
   * writes to one inode serialize on its lock in the kernel anyway, and
   * concurrent writers spin on it: 1 GiB in 8 MiB writes cost 0.27 s of
   * system time one at a time, 0.43-1.24 s four at a time (the thread
   * pool's size), for no gain in speed (one writer moves ~3.7 GB/s).
   */
  private writing: Promise<unknown> = Promise.resolve();
  /** The temporary file when written with blocking calls, and the microseconds they took. */
  private blocking: { fd: number; spentUs: number } | undefined;

  /**
   * `leftovers`: where a recursive download learns, one readdir per directory, that no journal exists.
   * `blockingWrites`: when a one-response object may be written with blocking calls.
   */
  constructor(
    readonly finalPath: string,
    private readonly leftovers?: LeftoverIndex,
    private readonly blockingWrites?: BlockingWrites,
  ) {
    this.journalPath = join(dirname(finalPath), `.${basename(finalPath)}${JOURNAL_SUFFIX}`);
    this.tempPath = this.journalPath.slice(0, -".journal".length);
  }

  /** What an earlier, interrupted download left here, if its journal is readable. */
  async previous(): Promise<PartialDownload | undefined> {
    // The index was read before this run wrote anything: it answers only until this sink opens its file.
    if (this.leftovers && this.handle === undefined && !(await this.leftovers.mayHaveJournal(this.finalPath))) return undefined;
    let text: string;
    try {
      text = await readFile(this.journalPath, "utf8");
    } catch {
      return undefined;
    }
    const lines = text.split("\n");
    let header: ObjectIdentity & { version?: number };
    try {
      header = JSON.parse(lines[0] ?? "") as ObjectIdentity & { version?: number };
    } catch {
      return { identity: { etag: "", size: -1 }, done: [], location: this.tempPath };
    }
    const done: Range[] = [];
    for (const line of lines.slice(1)) {
      // The last line may be torn by a kill mid-append: ignore what does not parse.
      try {
        const entry = JSON.parse(line) as { o?: unknown; n?: unknown };
        if (typeof entry.o === "number" && typeof entry.n === "number") done.push({ offset: entry.o, length: entry.n });
      } catch {
        // torn line
      }
    }
    return { identity: { etag: header.etag, size: header.size }, done, location: this.tempPath };
  }

  /** Removes what an earlier download left (the caller decided not to resume it). */
  async forgetPrevious(): Promise<void> {
    await unlink(this.journalPath).catch(() => undefined);
    await unlink(this.tempPath).catch(() => undefined);
  }

  async open(size: number, identity: ObjectIdentity, resumable = true): Promise<void> {
    this.closed = false;
    this.wroteAny = false;
    this.journal = undefined;
    this.writing = Promise.resolve();
    this.blocking = undefined;
    if (!resumable && this.blockingWrites?.shouldBlock()) {
      const started = performance.now();
      const fd = this.createSync();
      this.blocking = { fd, spentUs: (performance.now() - started) * 1000 };
      return;
    }
    // "wx": a leftover of an earlier run is replaced (it was reported, or is
    // being started over); the first try saves two unlinks per small object.
    this.handle = await open(this.tempPath, "wx+", 0o644).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
      await this.forgetPrevious();
      return open(this.tempPath, "wx+", 0o644);
    });
    // Size the file up front: positional writes then never extend it. (A
    // one-range object is written in one go: it needs no sizing.)
    if (size > 0 && resumable) await this.handle.truncate(size);
    if (!resumable) return;
    this.journal = await open(this.journalPath, "wx", 0o644);
    await this.journal.write(JSON.stringify({ version: 1, etag: identity.etag, size: identity.size }) + "\n");
  }

  /** open(..., "wx+") with blocking calls, replacing a leftover of an earlier run. */
  private createSync(): number {
    try {
      return openSync(this.tempPath, "wx+", 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      rmSync(this.journalPath, { force: true });
      rmSync(this.tempPath, { force: true });
      return openSync(this.tempPath, "wx+", 0o644);
    }
  }

  /** Continues an earlier download into its temporary file. */
  async reopen(): Promise<void> {
    this.closed = false;
    this.handle = await open(this.tempPath, "r+");
    this.journal = await open(this.journalPath, "a");
  }

  write(_index: number, offset: number, data: Buffer): Promise<void> {
    const blocking = this.blocking;
    if (blocking) {
      const started = performance.now();
      try {
        let done = 0;
        while (done < data.length) done += writeSync(blocking.fd, data, done, data.length - done, offset + done);
        this.wroteAny = true;
      } catch (err) {
        return Promise.reject(err);
      } finally {
        blocking.spentUs += (performance.now() - started) * 1000;
      }
      return Promise.resolve();
    }
    const turn = this.writing.then(() => this.writeNow(offset, data));
    this.writing = turn.catch(() => undefined);
    return turn;
  }

  private async writeNow(offset: number, data: Buffer): Promise<void> {
    const handle = this.handle;
    if (!handle) throw new Error("FileSink.write before open");
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await handle.write(data, done, data.length - done, offset + done);
      done += bytesWritten;
    }
    this.wroteAny = true;
    // One short append per range, after its bytes: a line is never ahead of its data.
    await this.journal?.write(`{"o":${offset},"n":${data.length}}\n`);
  }

  /** Reads back a range already written (to check a checksum over ranges fetched by an earlier run). */
  async read(offset: number, target: Buffer): Promise<void> {
    if (this.blocking) {
      for (let filled = 0; filled < target.length; ) {
        const n = readSync(this.blocking.fd, target, filled, target.length - filled, offset + filled);
        if (n === 0) throw new Error(`${this.tempPath} is shorter than what was written`);
        filled += n;
      }
      return;
    }
    const handle = this.handle;
    if (!handle) throw new Error("FileSink.read before open");
    let filled = 0;
    while (filled < target.length) {
      const { bytesRead } = await handle.read(target, filled, target.length - filled, offset + filled);
      if (bytesRead === 0) throw new Error(`${this.tempPath} is shorter than its journal says`);
      filled += bytesRead;
    }
  }

  async commit(info: { lastModified?: Date }): Promise<void> {
    const blocking = this.blocking;
    if (blocking) {
      const started = performance.now();
      this.blocking = undefined;
      try {
        if (info.lastModified) futimesSync(blocking.fd, info.lastModified, info.lastModified);
      } finally {
        closeSync(blocking.fd);
      }
      try {
        renameSync(this.tempPath, this.finalPath);
      } catch (err) {
        throw this.clash(err);
      }
      this.blockingWrites?.record(blocking.spentUs + (performance.now() - started) * 1000);
      return;
    }
    await this.close();
    if (info.lastModified) await utimes(this.tempPath, info.lastModified, info.lastModified);
    await rename(this.tempPath, this.finalPath).catch((err: unknown) => {
      throw this.clash(err);
    });
    if (this.journaled) await unlink(this.journalPath).catch(() => undefined);
  }

  /**
   * The download failed. With `keep` (it was interrupted, and bytes are on
   * disk) the temporary file and journal stay for --resume; otherwise
   * nothing is left behind.
   */
  async discard(keep = false): Promise<boolean> {
    await this.close().catch(() => undefined);
    if (keep && this.wroteAny && this.journaled) return true;
    await this.forgetPrevious();
    return false;
  }

  /** A rename failing because a directory holds the final name: a key that clashes with a prefix. */
  private clash(err: unknown): unknown {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") {
      return Object.assign(new Error(`${this.finalPath}: a directory of the same name is in the way (the key clashes with a prefix)`), { code: "S3X_PATH_CLASH" });
    }
    return err;
  }

  /** Whether this download keeps a journal (opened with one, or continuing one). */
  private get journaled(): boolean {
    return this.journal !== undefined;
  }

  private async close(): Promise<void> {
    if (this.blocking) {
      closeSync(this.blocking.fd);
      this.blocking = undefined;
    }
    if (this.closed) return;
    this.closed = true;
    // A write still in flight (a failed download's other parts) finishes first.
    await this.writing;
    await this.journal?.close();
    await this.handle?.close();
  }
}
