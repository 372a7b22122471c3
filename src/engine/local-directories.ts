import { lstat, mkdir } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * `mkdir -p` that fails with the real reason. Node 20's recursive mkdir
 * answers ENOENT ("no such file or directory") when a missing directory
 * cannot be created, whatever the cause: on a read-only file system the
 * user would read that the path does not exist instead of EROFS. On ENOENT
 * the first missing directory is created alone, which fails with the
 * kernel's own error (EROFS, EACCES, ENOSPC…); if it succeeds (another
 * process made it meanwhile), the whole path is tried once more.
 */
export async function makeDirectories(path: string, mode?: number): Promise<void> {
  try {
    await mkdir(path, { recursive: true, mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    const missing = await firstMissing(path);
    if (missing === undefined) throw err;
    await mkdir(missing, { mode }).catch((reason: NodeJS.ErrnoException) => {
      if (reason.code !== "EEXIST") throw reason;
    });
    await mkdir(path, { recursive: true, mode });
  }
}

/** The outermost directory of `path` that does not exist (undefined: none is missing, or the root is). */
async function firstMissing(path: string): Promise<string | undefined> {
  let missing: string | undefined;
  for (let current = path; ; current = dirname(current)) {
    const found = await lstat(current).then(
      () => true,
      () => false,
    );
    if (found) return missing;
    missing = current;
    if (dirname(current) === current) return undefined;
  }
}
