import { randomBytes } from "node:crypto";
import { closeSync, fchmodSync, futimesSync, openSync, renameSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { DownloadSink, ObjectIdentity, PartialDownload } from "./download-sink.js";
import type { BlockingWrites, WritePolicies } from "./blocking-writes.js";
import { DestinationLock } from "./destination-lock.js";
import { JOURNAL_SUFFIX, type LeftoverIndex } from "./leftover-index.js";
import { readBlocking, readThrough, writeBlocking, writeCallLength } from "./write-calls.js";
import { assertUnreplaced, ForeignWorkingFileError, openLeftover, pathClash, PRIVATE_MODE, publishedMode, workingFileState } from "./working-files.js";
import { createJournal, DEFAULT_FLUSH, journalHeader, JournalWriter, nodeFileSystem, readJournal, type FlushPolicy, type SinkFileSystem } from "./range-journal.js";

/** What tests may replace: the file-system calls (to record their order) and when journal lines are flushed. */
export interface FileSinkOptions {
  fileSystem?: SinkFileSystem;
  flush?: FlushPolicy;
}

/**
 * Writes parts at their offsets into a temporary file beside the destination
 * and renames it over the destination only when every byte has arrived, so a
 * failed or interrupted download never leaves a half-written file under the
 * final name (and a rename within one directory is atomic).
 *
 * Two runs to one destination: the temporary file's name is unique per run (`.NAME.<random>.s3x-part`),
 * so each run renames only the bytes it wrote and the final name always holds one whole object. That is
 * all an object that arrives in one response needs. A download with a journal (ranged, or continuing or
 * removing a leftover) also takes a lock file beside the destination (`.NAME.s3x-lock`, destination-lock.ts):
 * one run at a time may touch a journal and the file it names; a second is refused with one line naming the
 * first. The lock is not taken for one-response objects: on 2,000 objects of 64 KiB its create and unlink
 * per file cost ~40 % more time.
 *
 * Resume: beside the temporary file a journal (`.NAME.s3x-part.journal`) names it and records which ranges
 * are on disk (written here, or by a worker thread: `landed`). A run killed at any point (even kill -9)
 * leaves both behind; `--resume` adopts that file (only holding the lock, so only once its owner is dead)
 * and fetches what is missing.
 *
 * Working files are created 0600 (the usual mode comes just before the rename) and used only if
 * s3x made them: a directory others may write to can hold planted ones (working-files.ts).
 *
 * Durability, for ranged downloads (the ones with a journal): a journal line
 * is appended only after its range's fdatasync, in batches (range-journal.ts);
 * the file is fsynced (bytes and time) before the rename and the directory
 * after it. After a power loss the final name holds the old file or the
 * complete new one, and the journal never vouches for bytes not on disk.
 * An object that arrived in one response (a small file) is not fsynced, as
 * aws-cli, s5cmd and rclone do not: on 2,000 small files an fsync each
 * doubled the time spent writing them here. Such a file is written in one
 * call into a file that was never sized up front, so after a power loss its
 * name may hold a short or empty file (ext4, XFS and btrfs allocate on
 * writeback), which a later `sync` sees by its size and fetches again, but
 * not a file of the right size with missing bytes. Given write policies,
 * such a file, and each write call of a ranged download, are made with
 * blocking calls while those are fast (see blocking-writes.ts).
 */
export class FileSink implements DownloadSink {
  /** This run's temporary file, or once --resume adopted one, the interrupted run's. */
  tempPath: string;
  readonly journalPath: string;
  private readonly directory: string;
  /** The fixed temporary name of releases before per-run names (their journals have no `temp`). */
  private readonly legacyTemp: string;
  private readonly lock: DestinationLock;
  private readonly fs: SinkFileSystem;
  private handle: FileHandle | undefined;
  private journal: JournalWriter | undefined;
  /** The temporary file the journal found by previous() names. */
  private leftoverTemp: string | undefined;
  /** This run continues an interrupted run's file (reopen). */
  private adopted = false;
  private closed = false;
  private wroteAny = false;
  /** This run created its own temporary file (removed on failure even without the lock). */
  private createdTemp = false;
  /** Where --debug lines about the lock go (given to claim()). */
  private debug: (line: string) => void = () => undefined;
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

  /** `leftovers`: where a recursive download learns, one readdir per directory, that no journal exists.
   * `writes`: when a one-response object, or a ranged write, may use blocking calls (none: never). */
  constructor(
    readonly finalPath: string,
    private readonly leftovers?: LeftoverIndex,
    private readonly writes: Partial<WritePolicies> = {},
    private readonly options: FileSinkOptions = {},
  ) {
    this.directory = dirname(finalPath);
    const name = basename(finalPath);
    this.journalPath = join(this.directory, `.${name}${JOURNAL_SUFFIX}`);
    this.legacyTemp = join(this.directory, `.${name}.s3x-part`);
    this.tempPath = join(this.directory, `.${name}.${randomBytes(4).toString("hex")}.s3x-part`);
    this.lock = new DestinationLock(finalPath);
    this.fs = options.fileSystem ?? nodeFileSystem;
  }

  /**
   * Takes the destination's lock (refused while another live run holds it); a
   * dead holder's orphaned file is removed. `lazily`: only note `debug`; the
   * lock is taken once needed (a leftover journal found, or a ranged open).
   */
  async claim(debug: (line: string) => void = () => undefined, lazily = false): Promise<void> {
    this.debug = debug;
    if (lazily || this.lock.held) return;
    const dead = await this.lock.acquire(basename(this.tempPath), debug, this.writes.smallFiles?.fast === true);
    if (!dead) return;
    const orphan = join(this.directory, dead.temp);
    // Only a name, and a file, of ours: a (maybe planted) lock file never chooses what is deleted elsewhere.
    if (!dead.temp.startsWith(`.${basename(this.finalPath)}.`) || !dead.temp.endsWith(".s3x-part") || /[/\\]/.test(dead.temp)) return;
    const journal = await readJournal(this.journalPath, this.directory, this.legacyTemp).catch(() => undefined);
    if (typeof journal === "object" && journal.temp === orphan) return; // --resume may continue it
    if ((await workingFileState(orphan)) === "own") await this.fs.unlink(orphan).catch(() => undefined);
  }

  /**
   * What an earlier, interrupted download left here. `readOnly`: only to report
   * what this run itself just kept, after its lock was released: no lock taken.
   */
  async previous(readOnly = false): Promise<PartialDownload | undefined> {
    // The index was read before this run wrote anything: it answers only until this sink opens its file.
    if (this.leftovers && this.handle === undefined && !(await this.leftovers.mayHaveJournal(this.finalPath))) return undefined;
    const found = await readJournal(this.journalPath, this.directory, this.legacyTemp);
    if (found === undefined) return undefined;
    if (!this.lock.held && !readOnly) {
      // Only the lock's holder may continue or remove a leftover: take it, then look again.
      await this.claim(this.debug);
      return this.previous();
    }
    if (found === "unreadable") return { identity: { etag: "", size: -1 }, done: [], location: this.journalPath };
    const temp = found.temp === this.tempPath ? "own" : await workingFileState(found.temp);
    if (typeof temp === "object") return this.refuse(new ForeignWorkingFileError(found.temp, temp.foreign));
    if (temp === "missing") {
      // Its file was published just before a crash, the journal not yet removed: nothing to resume.
      if (this.lock.held) await this.fs.unlink(this.journalPath).catch(() => undefined);
      return undefined;
    }
    if (!readOnly) this.leftoverTemp = found.temp;
    return { identity: found.identity, done: found.done, location: found.temp };
  }

  /**
   * The destination is already up to date (sync's rules skipped it), so no
   * sink opens it: a journal whose temporary file is gone was left by a run
   * killed between its rename and the journal's removal, and is dropped
   * here. A leftover still holding bytes is left for the next download to
   * this path to report; a live run's lock, or a working file not s3x's own, leaves everything alone.
   */
  async dropStaleJournal(): Promise<void> {
    const found = await readJournal(this.journalPath, this.directory, this.legacyTemp).catch(() => undefined);
    if (typeof found !== "object" || (await workingFileState(found.temp)) !== "missing") return;
    try {
      await this.claim(this.debug);
    } catch {
      return; // another run holds the lock: the journal is its business
    }
    try {
      await this.previous(); // under the lock, a journal without its file is removed
    } finally {
      await this.lock.release();
    }
  }

  /** Removes what an earlier download left (the caller decided not to resume it); only the lock's holder may. */
  async forgetPrevious(): Promise<void> {
    if (!this.lock.held) return;
    let leftover = this.leftoverTemp;
    if (leftover === undefined) {
      const found = await readJournal(this.journalPath, this.directory, this.legacyTemp);
      if (typeof found === "object") leftover = found.temp;
    }
    this.leftoverTemp = undefined;
    // The file before its journal: a journal without its file is recognised as stale. Only a file of ours.
    if (leftover !== undefined && (await workingFileState(leftover)) === "own") await this.fs.unlink(leftover).catch(() => undefined);
    await this.fs.unlink(this.journalPath).catch(() => undefined);
  }

  async open(size: number, identity: ObjectIdentity, resumable = true): Promise<void> {
    this.closed = false;
    this.wroteAny = false;
    this.journal = undefined;
    this.writing = Promise.resolve();
    this.blocking = undefined;
    // A journaled download needs the lock; a one-response object does not (see the class comment).
    if (resumable && !this.lock.held) await this.claim(this.debug);
    if (!resumable && this.writes.smallFiles?.shouldBlock()) {
      const fd = await this.createTemp();
      this.createdTemp = true;
      this.blocking = { fd, spentUs: 0 };
      return;
    }
    this.handle = await this.fs.open(this.tempPath, "wx+", PRIVATE_MODE);
    this.createdTemp = true;
    // Size the file up front: positional writes then never extend it. (A
    // one-range object is written in one go: it needs no sizing.)
    if (size > 0 && resumable) await this.handle.truncate(size);
    if (!resumable) return;
    const journal = await createJournal(this.fs, this.journalPath, journalHeader(identity, basename(this.tempPath)), () => this.forgetPrevious());
    this.journal = new JournalWriter(this.handle, journal, this.directory, this.fs, this.options.flush ?? DEFAULT_FLUSH);
  }

  /** A one-response object's temporary file, created blocking while creates are fast here (blocking-writes.ts). */
  private async createTemp(): Promise<number> {
    const creates = this.writes.creates;
    if (creates && !creates.shouldBlock()) return this.fs.openFd(this.tempPath, "wx+", PRIVATE_MODE);
    const started = performance.now();
    const fd = openSync(this.tempPath, "wx+", PRIVATE_MODE);
    creates?.record((performance.now() - started) * 1000);
    return fd;
  }

  /** Continues the interrupted download previous() found, in its file (checked again once open: previous() saw names). */
  async reopen(): Promise<void> {
    const temp = this.leftoverTemp;
    if (temp === undefined || !this.lock.held) throw new Error(`${this.finalPath}: nothing to continue (or the destination is not locked)`);
    this.closed = false;
    const { file, journal } = await openLeftover(temp, this.journalPath, (path, flags) => this.fs.open(path, flags)).catch((err: unknown) => this.refuse(err));
    this.handle = file;
    this.tempPath = temp;
    this.adopted = true;
    this.journal = new JournalWriter(this.handle, journal, this.directory, this.fs, this.options.flush ?? DEFAULT_FLUSH);
  }

  write(_index: number, offset: number, data: Buffer): Promise<void> {
    const blocking = this.blocking;
    if (blocking) {
      const started = performance.now();
      try {
        writeBlocking(this.fs, blocking.fd, data, offset);
        this.wroteAny = true;
      } catch (err) {
        return Promise.reject(err);
      } finally {
        blocking.spentUs += (performance.now() - started) * 1000;
      }
      return Promise.resolve();
    }
    const ranges = this.writes.ranges;
    if (this.handle && ranges?.shouldBlock()) {
      try {
        this.writeBlocking(this.handle.fd, offset, data, ranges);
      } catch (err) {
        return Promise.reject(err);
      }
      return Promise.resolve();
    }
    const turn = this.writing.then(() => this.writeNow(offset, data));
    this.writing = turn.catch(() => undefined);
    return turn;
  }

  /**
   * A ranged write made with blocking calls, each timed for `policy`. It may
   * overlap a write still in flight through the pool (after the policy
   * changed its mind): they cover different ranges.
   */
  private writeBlocking(fd: number, offset: number, data: Buffer, policy: BlockingWrites): void {
    if (this.journal?.failure) throw this.journal.failure;
    writeBlocking(this.fs, fd, data, offset, (micros) => policy.record(micros));
    this.wroteAny = true;
    this.journal?.record(offset, data.length);
  }

  private async writeNow(offset: number, data: Buffer): Promise<void> {
    const handle = this.handle;
    if (!handle) throw new Error("FileSink.write before open");
    if (this.journal?.failure) throw this.journal.failure;
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await handle.write(data, done, writeCallLength(data.length - done), offset + done);
      done += bytesWritten;
    }
    this.wroteAny = true;
    // Journaled in the next batch, after the data's fdatasync: a line is never ahead of its bytes.
    this.journal?.record(offset, data.length);
  }

  /** A journaled download's file, for worker threads' positional writes (DownloadSink.positionalFd). */
  positionalFd(): number | undefined {
    return this.closed || this.blocking || !this.journal ? undefined : this.handle?.fd;
  }

  /** Bytes a worker thread wrote: journaled as this sink's own writes are, after the next fdatasync. */
  landed(offset: number, length: number): void {
    if (this.journal?.failure) throw this.journal.failure;
    this.wroteAny = true;
    this.journal?.record(offset, length);
  }

  /** Reads back a range already written (to check a checksum over ranges fetched by an earlier run). */
  async read(offset: number, target: Buffer): Promise<void> {
    if (this.blocking) return readBlocking(this.blocking.fd, target, offset, this.tempPath);
    if (!this.handle) throw new Error("FileSink.read before open");
    await readThrough(this.handle, target, offset, this.tempPath);
  }

  async commit(info: { lastModified?: Date }): Promise<void> {
    const blocking = this.blocking;
    if (blocking) {
      const started = performance.now();
      this.blocking = undefined;
      try {
        if (info.lastModified) futimesSync(blocking.fd, info.lastModified, info.lastModified);
        fchmodSync(blocking.fd, publishedMode());
      } finally {
        closeSync(blocking.fd);
      }
      try {
        renameSync(this.tempPath, this.finalPath);
      } catch (err) {
        throw pathClash(this.finalPath, err);
      }
      this.writes.smallFiles?.record(blocking.spentUs + (performance.now() - started) * 1000);
      await this.lock.release(true);
      return;
    }
    await this.writing;
    const journal = this.journal;
    // Lines still waiting are not needed any more: the file is complete.
    await journal?.settle();
    if (journal?.failure) throw journal.failure;
    const handle = this.handle;
    if (!handle) throw new Error("FileSink.commit before open");
    if (info.lastModified) await handle.utimes(info.lastModified, info.lastModified);
    await handle.chmod(publishedMode());
    // A ranged download's bytes and time reach the disk before its name does (see the class comment);
    // the name, reachable by others for long, goes only to the file written here.
    if (journal) await handle.sync();
    const written = journal ? await handle.stat() : undefined;
    await this.close();
    if (written) await assertUnreplaced(this.tempPath, written).catch((err: unknown) => this.refuse(err));
    await this.fs.rename(this.tempPath, this.finalPath).catch((err: unknown) => {
      throw pathClash(this.finalPath, err);
    });
    if (journal) {
      await this.fs.syncDirectory(this.directory);
      await this.fs.unlink(this.journalPath).catch(() => undefined);
    }
    await this.lock.release();
  }

  /**
   * The download failed. With `keep` (it was interrupted, and bytes are on
   * disk) the temporary file and journal stay for --resume, the journal
   * brought up to date first; otherwise nothing is left behind. A sink
   * without the lock removes only its own temporary file (a one-response
   * object, or refused the lock): never another run's file, journal or lock.
   */
  async discard(keep = false): Promise<boolean> {
    if (!this.lock.held) {
      await this.close().catch(() => undefined);
      if (this.createdTemp) await this.fs.unlink(this.tempPath).catch(() => undefined);
      return false;
    }
    const journal = this.journal;
    if (keep && journal && (this.wroteAny || this.adopted)) {
      await this.writing;
      await journal.flush().catch(() => undefined);
      await this.close().catch(() => undefined);
      await this.lock.release();
      return true;
    }
    await this.close().catch(() => undefined);
    await this.fs.unlink(this.tempPath).catch(() => undefined);
    await this.fs.unlink(this.journalPath).catch(() => undefined);
    await this.lock.release();
    return false;
  }

  /** Rethrows `err`; when a working file here is not s3x's, the lock is given up first, so that discard() removes nothing. */
  private async refuse(err: unknown): Promise<never> {
    if (err instanceof ForeignWorkingFileError) {
      this.createdTemp = false;
      await this.lock.release();
    }
    throw err;
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
    await this.journal?.settle();
    await this.journal?.journal.close();
    await this.handle?.close();
  }
}
