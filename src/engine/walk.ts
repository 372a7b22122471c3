import { opendir, stat, lstat } from "node:fs/promises";
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

async function* walkDirectory(absolute: string, relative: string, ancestors: Set<string>, options: WalkOptions): AsyncGenerator<LocalEntry> {
  let dir;
  try {
    dir = await opendir(absolute);
  } catch (err) {
    options.onProblem({ relativePath: relative || ".", message: (err as Error).message });
    return;
  }
  for await (const dirent of dir) {
    const childAbsolute = join(absolute, dirent.name);
    const childRelative = relative ? `${relative}/${dirent.name}` : dirent.name;
    let info;
    try {
      if (dirent.isSymbolicLink()) {
        if (!options.followSymlinks) continue;
        info = await stat(childAbsolute);
      } else {
        info = dirent.isFile() || dirent.isDirectory() ? await lstat(childAbsolute) : undefined;
      }
    } catch (err) {
      options.onProblem({ relativePath: childRelative, message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
      continue;
    }
    if (!info) continue; // sockets, FIFOs, devices: not files to upload
    if (info.isDirectory()) {
      const id = `${info.dev}:${info.ino}`;
      if (ancestors.has(id)) {
        options.onProblem({ relativePath: childRelative, message: "symlink loop (links back to a directory above it); skipped" });
        continue;
      }
      ancestors.add(id);
      yield* walkDirectory(childAbsolute, childRelative, ancestors, options);
      ancestors.delete(id);
    } else if (info.isFile()) {
      yield { relativePath: childRelative, absolutePath: childAbsolute, size: info.size, mtimeMs: info.mtimeMs };
    }
  }
}
