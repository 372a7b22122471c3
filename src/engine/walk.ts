import { lstatSync, statSync, type Dirent, type Stats } from "node:fs";
import { lstat, opendir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isWorkingFile } from "./sinks/working-files.js";

export interface LocalEntry {
  /** "/"-separated path relative to the walked directory. */
  relativePath: string;
  absolutePath: string;
  size: number;
  mtimeMs: number;
}

export interface WalkProblem {
  relativePath: string;
  message: string;
  /**
   * Not a file s3x can upload, skipped with a warning as aws-cli skips it (a
   * named pipe, socket or device; a dangling symlink): the run goes on and
   * its exit status says files were skipped, where other problems are failures.
   */
  skipped?: boolean;
}

/** aws-cli's words for what it skips (awscli/customizations/s3/filegenerator.py). */
export const SPECIAL_FILE = "File is character special device, block special device, FIFO, or socket.";
export const MISSING_FILE = "File does not exist.";

export interface WalkOptions {
  followSymlinks: boolean;
  onProblem: (problem: WalkProblem) => void;
  /**
   * Whether the walk may block the event loop right now: nothing in flight
   * would stall (a sync still gathering both sides, a copy not started yet).
   * Then a batch is stat'ed synchronously, which on a local disk costs a
   * fraction of the thread pool's round trips (2,000 files here: ~40 ms of
   * CPU instead of ~120). Stats averaging more than `slowStatMs` (a network
   * file system) end that for the rest of the walk.
   */
  mayBlock?: () => boolean;
  /** Synchronous stats averaging more than this (default 0.1 ms; ~0.005 on a local disk) go back to the thread pool. */
  slowStatMs?: number;
}

const SLOW_STAT_MS = 0.1;

/**
 * Whether synchronous stats still pay: their running average stays under
 * `slowStatMs` (judged from 32 stats on, as a busy machine preempts a single
 * stat now and then). Once slow, for good: the file system is remote.
 */
class SyncStatJudge {
  private slow = false;
  private count = 0;
  private spentMs = 0;

  constructor(private readonly slowStatMs = SLOW_STAT_MS) {}

  get fast(): boolean {
    return !this.slow;
  }

  /** Runs `stats` synchronous stats and records what they took, also when they throw. */
  time<T>(stats: number, work: () => T): T {
    const started = performance.now();
    try {
      return work();
    } finally {
      this.count += stats;
      this.spentMs += performance.now() - started;
      if (this.count >= 32 && this.spentMs / this.count > this.slowStatMs) this.slow = true;
    }
  }
}

/**
 * Streams every regular file under `root`, depth first, without reading
 * whole directories into memory first. Symlinks are followed by default (as
 * aws-cli); a link back to a directory on the current path is a loop,
 * reported and skipped. With followSymlinks false, links are skipped.
 */
export async function* walkFiles(root: string, options: WalkOptions): AsyncGenerator<LocalEntry> {
  const rootStat = await stat(root);
  const walk: Walk = { options, judge: new SyncStatJudge(options.slowStatMs) };
  yield* walkDirectory(root, "", new Set([`${rootStat.dev}:${rootStat.ino}`]), walk);
}

/** One walk's settings and what it learnt about the file system on the way. */
interface Walk {
  options: WalkOptions;
  /** Whether synchronous stats are still fast enough to use. */
  judge: SyncStatJudge;
}

/**
 * How many directory entries are stat'ed at once. Each stat is a round trip
 * through libuv's thread pool: awaited one by one, 2,000 files cost ~0.45 s
 * of idle waiting on two busy cores (most of a no-op sync); in batches the
 * pool's threads overlap them. Batches keep the walk's order and its memory
 * bounded. Synchronous stats are cheaper still, but on NFS or FUSE, where
 * datasets often live, one slow stat would stall every transfer in flight:
 * they are used only while nothing is in flight (WalkOptions.mayBlock).
 */
const STAT_BATCH = 128;

interface StatResult {
  dirent: Dirent;
  info?: Stats;
  error?: NodeJS.ErrnoException;
}

async function* walkDirectory(absolute: string, relative: string, ancestors: Set<string>, walk: Walk): AsyncGenerator<LocalEntry> {
  const { options } = walk;
  let dir;
  try {
    dir = await opendir(absolute, { bufferSize: STAT_BATCH });
  } catch (err) {
    options.onProblem({ relativePath: relative || ".", message: (err as Error).message });
    return;
  }
  const statAll = async function* (entries: Dirent[]): AsyncGenerator<LocalEntry> {
    const results =
      options.mayBlock !== undefined && walk.judge.fast && options.mayBlock()
        ? statBatchSync(absolute, entries, walk)
        : await Promise.all(entries.map((dirent) => statEntry(join(absolute, dirent.name), dirent, options.followSymlinks)));
    for (const result of results) yield* visit(result);
  };
  const visit = async function* ({ dirent, info, error }: StatResult): AsyncGenerator<LocalEntry> {
    const childAbsolute = join(absolute, dirent.name);
    const childRelative = relative ? `${relative}/${dirent.name}` : dirent.name;
    if (error) {
      // A dangling symlink, or a file removed since the directory was read.
      if (error.code === "ENOENT") options.onProblem({ relativePath: childRelative, message: MISSING_FILE, skipped: true });
      else options.onProblem({ relativePath: childRelative, message: `cannot read: ${error.code ?? error.message}` });
      return;
    }
    if (!info) {
      // Links are left out silently when not followed (as aws-cli); pipes, sockets and devices with a warning.
      if (!dirent.isSymbolicLink()) options.onProblem({ relativePath: childRelative, message: SPECIAL_FILE, skipped: true });
      return;
    }
    if (info.isDirectory()) {
      const id = `${info.dev}:${info.ino}`;
      if (ancestors.has(id)) {
        options.onProblem({ relativePath: childRelative, message: "symlink loop (links back to a directory above it); skipped" });
        return;
      }
      ancestors.add(id);
      yield* walkDirectory(childAbsolute, childRelative, ancestors, walk);
      ancestors.delete(id);
    } else if (info.isFile()) {
      if (isWorkingFile(dirent.name)) return; // another run's temporary file, journal or lock
      yield { relativePath: childRelative, absolutePath: childAbsolute, size: info.size, mtimeMs: info.mtimeMs };
    } else options.onProblem({ relativePath: childRelative, message: SPECIAL_FILE, skipped: true }); // a link to a pipe, socket or device
  };
  let batch: Dirent[] = [];
  for await (const dirent of dir) {
    batch.push(dirent);
    if (batch.length < STAT_BATCH) continue;
    const full = batch;
    batch = [];
    yield* statAll(full);
  }
  yield* statAll(batch);
}

/** statEntry for a batch, synchronously, timed for the walk's judge. */
function statBatchSync(directory: string, entries: Dirent[], walk: Walk): StatResult[] {
  return walk.judge.time(entries.length, () => entries.map((dirent) => statEntrySync(join(directory, dirent.name), dirent, walk.options.followSymlinks)));
}

/**
 * Which stat an entry needs: links are followed (stat) or skipped, files and
 * directories are lstat'ed, other kinds are skipped unstat'ed.
 */
function statCallFor(dirent: Dirent, followSymlinks: boolean): "stat" | "lstat" | undefined {
  if (dirent.isSymbolicLink()) return followSymlinks ? "stat" : undefined;
  return dirent.isFile() || dirent.isDirectory() ? "lstat" : undefined;
}

function statEntrySync(path: string, dirent: Dirent, followSymlinks: boolean): StatResult {
  const call = statCallFor(dirent, followSymlinks);
  try {
    return call ? { dirent, info: call === "stat" ? statSync(path) : lstatSync(path) } : { dirent };
  } catch (err) {
    return { dirent, error: err as NodeJS.ErrnoException };
  }
}

async function statEntry(path: string, dirent: Dirent, followSymlinks: boolean): Promise<StatResult> {
  const call = statCallFor(dirent, followSymlinks);
  try {
    return call ? { dirent, info: await (call === "stat" ? stat(path) : lstat(path)) } : { dirent };
  } catch (err) {
    return { dirent, error: err as NodeJS.ErrnoException };
  }
}

/**
 * Stats single paths (the files a download sync compares against), with
 * the walk's policy: synchronously while `mayBlock` allows and the file
 * system answers fast, else through the thread pool. A no-op sync of 2,000
 * objects otherwise waits on 2,000 thread-pool round trips one after another.
 */
export class PathStats {
  private readonly judge: SyncStatJudge;

  constructor(
    private readonly mayBlock: () => boolean,
    slowStatMs?: number,
  ) {
    this.judge = new SyncStatJudge(slowStatMs);
  }

  /** The path's stat (symlinks followed), or undefined when there is nothing there (or it cannot be read). */
  async stat(path: string): Promise<Stats | undefined> {
    if (!this.judge.fast || !this.mayBlock()) return stat(path).catch(() => undefined);
    try {
      return this.judge.time(1, () => statSync(path, { throwIfNoEntry: false }));
    } catch {
      return undefined;
    }
  }
}
