import type { Dirent, Stats } from "node:fs";
import { lstat, opendir, stat } from "node:fs/promises";
import { join } from "node:path";

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
}

export interface WalkOptions {
  followSymlinks: boolean;
  onProblem: (problem: WalkProblem) => void;
}

/**
 * Streams every regular file under `root`, depth first, without reading
 * whole directories into memory first. Symlinks are followed by default (as
 * aws-cli); a link back to a directory on the current path is a loop,
 * reported and skipped. With followSymlinks false, links are skipped.
 */
export async function* walkFiles(root: string, options: WalkOptions): AsyncGenerator<LocalEntry> {
  const rootStat = await stat(root);
  yield* walkDirectory(root, "", new Set([`${rootStat.dev}:${rootStat.ino}`]), options);
}

/**
 * How many directory entries are stat'ed at once. Each stat is a round trip
 * through libuv's thread pool: awaited one by one, 2,000 files cost ~0.45 s
 * of idle waiting on two busy cores (most of a no-op sync); in batches the
 * pool's threads overlap them. Batches keep the walk's order and its memory
 * bounded. (Synchronous stats were no faster here, and on NFS or FUSE, where
 * datasets often live, one slow stat would stall every transfer in flight.)
 */
const STAT_BATCH = 128;

interface StatResult {
  dirent: Dirent;
  info?: Stats;
  error?: NodeJS.ErrnoException;
}

async function* walkDirectory(absolute: string, relative: string, ancestors: Set<string>, options: WalkOptions): AsyncGenerator<LocalEntry> {
  let dir;
  try {
    dir = await opendir(absolute, { bufferSize: STAT_BATCH });
  } catch (err) {
    options.onProblem({ relativePath: relative || ".", message: (err as Error).message });
    return;
  }
  const statAll = async function* (entries: Dirent[]): AsyncGenerator<LocalEntry> {
    const results = await Promise.all(entries.map((dirent) => statEntry(join(absolute, dirent.name), dirent, options.followSymlinks)));
    for (const result of results) yield* visit(result);
  };
  const visit = async function* ({ dirent, info, error }: StatResult): AsyncGenerator<LocalEntry> {
    const childAbsolute = join(absolute, dirent.name);
    const childRelative = relative ? `${relative}/${dirent.name}` : dirent.name;
    if (error) {
      options.onProblem({ relativePath: childRelative, message: `cannot read: ${error.code ?? error.message}` });
      return;
    }
    if (!info) return; // sockets, FIFOs, devices, unfollowed links: not files to upload
    if (info.isDirectory()) {
      const id = `${info.dev}:${info.ino}`;
      if (ancestors.has(id)) {
        options.onProblem({ relativePath: childRelative, message: "symlink loop (links back to a directory above it); skipped" });
        return;
      }
      ancestors.add(id);
      yield* walkDirectory(childAbsolute, childRelative, ancestors, options);
      ancestors.delete(id);
    } else if (info.isFile()) {
      yield { relativePath: childRelative, absolutePath: childAbsolute, size: info.size, mtimeMs: info.mtimeMs };
    }
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

/** Stats one entry: links are followed (or skipped), other non-files are skipped unstat'ed. */
async function statEntry(path: string, dirent: Dirent, followSymlinks: boolean): Promise<StatResult> {
  try {
    if (dirent.isSymbolicLink()) return followSymlinks ? { dirent, info: await stat(path) } : { dirent };
    return dirent.isFile() || dirent.isDirectory() ? { dirent, info: await lstat(path) } : { dirent };
  } catch (err) {
    return { dirent, error: err as NodeJS.ErrnoException };
  }
}
