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
