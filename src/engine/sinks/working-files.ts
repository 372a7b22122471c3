import { constants, type Stats } from "node:fs";
import { lstat, open, type FileHandle } from "node:fs/promises";

/**
 * The files a download keeps beside its destination while it runs: the
 * temporary file (`.NAME.<random>.s3x-part`, or `.NAME.s3x-part` from older
 * releases), its journal (`.NAME.s3x-part.journal`) and the lock
 * (`.NAME.s3x-lock`, and `.NAME.s3x-lock.stale-…` for an instant while a
 * stale lock is taken over). They are s3x's own, never the user's data: a
 * directory walk leaves them out, so `sync --delete` into a directory never
 * deletes another run's lock or temporary file and `cp -r` never uploads them.
 */
const WORKING_FILE = /^\..+\.s3x-(part|part\.journal|lock|lock\.stale-.+)$/;

export function isWorkingFile(name: string): boolean {
  return name.startsWith(".") && WORKING_FILE.test(name);
}

/**
 * A working file s3x finds but did not create: a symbolic link, a FIFO or
 * device, or a file of another user. A destination directory may be
 * writable by others (/tmp): a journal and temporary file planted there
 * would otherwise be continued into and renamed over the destination, by
 * root too. s3x refuses such a destination instead of touching the file.
 */
export class ForeignWorkingFileError extends Error {
  constructor(path: string, why: string) {
    super(`${path} ${why}: it is not a working file s3x made, so s3x does not use, rename or remove it (remove it to download here)`);
  }
}

/** Why a working file is not s3x's own (lstat or fstat of it), or undefined when it is: a regular file of this user. */
export function foreignWorkingFile(stats: Stats): string | undefined {
  if (stats.isSymbolicLink()) return "is a symbolic link";
  if (!stats.isFile()) return stats.isFIFO() ? "is a FIFO" : "is not a regular file";
  const uid = process.geteuid?.();
  if (uid !== undefined && stats.uid !== uid) return `belongs to uid ${stats.uid}, not to this user (uid ${uid})`;
  return undefined;
}

type Opener = (path: string, flags: number) => Promise<FileHandle>;

/**
 * Opens an existing working file (`flags`: O_RDONLY, O_RDWR, …) only if it is
 * s3x's own: never through a symbolic link (O_NOFOLLOW), never blocking on a
 * FIFO (O_NONBLOCK, a no-op for a regular file), and only a regular file of
 * this user (fstat of what was opened, so nothing can be swapped in between).
 * `opener`: the sink's injected file system (range-journal.ts), else fs.open.
 */
export async function openOwnWorkingFile(path: string, flags: number, opener: Opener = open): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await opener(path, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new ForeignWorkingFileError(path, "is a symbolic link");
    throw err;
  }
  const why = foreignWorkingFile(await handle.stat().catch(async (err: unknown) => {
    await handle.close();
    throw err;
  }));
  if (why === undefined) return handle;
  await handle.close();
  throw new ForeignWorkingFileError(path, why);
}

/** The state of a working file by its name: "missing", "own", or why it is foreign (never follows a symbolic link). */
export async function workingFileState(path: string): Promise<"missing" | "own" | { foreign: string }> {
  try {
    const why = foreignWorkingFile(await lstat(path));
    return why === undefined ? "own" : { foreign: why };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw err;
  }
}

/** The temporary name still holds the file this run wrote (same device and inode, not a link put in its place). */
export async function assertUnreplaced(path: string, written: { dev: number; ino: number }): Promise<void> {
  const now = await lstat(path);
  if (now.isSymbolicLink() || now.dev !== written.dev || now.ino !== written.ino) throw new ForeignWorkingFileError(path, "was replaced while s3x wrote it");
}

/** Working files are created readable by their user only: an object's bytes are not shown to others before they are published. */
export const PRIVATE_MODE = 0o600;

let published: number | undefined;

/** The mode a downloaded file gets just before its rename into place: what a plain create gives (0644 less the umask). */
export function publishedMode(): number {
  published ??= 0o644 & ~process.umask();
  return published;
}

/** An interrupted run's temporary file (read and written) and journal (appended to), both only if s3x's own. */
export async function openLeftover(temp: string, journalPath: string, opener: Opener): Promise<{ file: FileHandle; journal: FileHandle }> {
  const file = await openOwnWorkingFile(temp, constants.O_RDWR, opener);
  try {
    return { file, journal: await openOwnWorkingFile(journalPath, constants.O_WRONLY | constants.O_APPEND, opener) };
  } catch (err) {
    await file.close();
    throw err;
  }
}

/** A rename onto `finalPath` failing because a directory holds that name (the user's, or made for keys under it: set-executor tells). */
export function pathClash(finalPath: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") {
    return Object.assign(new Error(`${finalPath}: a local directory of that name is in the way`), { code: "S3X_PATH_CLASH", path: finalPath });
  }
  return err;
}
