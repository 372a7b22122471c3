import { mkdir, open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { ObjectRef } from "../../s3/operations.js";
import { destinationPrefix, uploadsDirectory } from "./upload-journal.js";

/**
 * One s3x at a time per destination key for resumable uploads: a lock file
 * next to the upload records (`<destination>.lock`, holding the pid). Without
 * it two runs to one key could both find the same interrupted upload and both
 * continue it, or one could abort the other's upload as obsolete. A lock left
 * by a process that is gone (kill -9) is taken over.
 */
export interface UploadLock {
  release(): Promise<void>;
}

/** Another live s3x holds the lock: this run is refused. */
export class DestinationBusyError extends Error {
  readonly code = "S3X_DESTINATION_BUSY";
  constructor(
    readonly destination: string,
    readonly pid: number,
  ) {
    // The command line names the destination before this message.
    super(`another s3x (pid ${pid}) is uploading to this key right now; run this again once it has finished`);
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the lock of `endpoint`/`ref`, or throws DestinationBusyError. */
export async function lockDestination(endpoint: string, ref: ObjectRef): Promise<UploadLock> {
  const dir = uploadsDirectory();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${destinationPrefix(endpoint, ref)}.lock`);
  const destination = `s3://${ref.bucket}/${ref.key}`;
  // Two tries: the second after removing a dead owner's lock.
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      return { release: () => unlink(file).catch(() => undefined) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const owner = Number((await readFile(file, "utf8").catch(() => "")).trim());
    if (isAlive(owner) || attempt > 0) throw new DestinationBusyError(destination, owner);
    // The owner is gone (or the file is still being written by a new owner: then its open wins below).
    if (owner > 0) await unlink(file).catch(() => undefined);
    else throw new DestinationBusyError(destination, owner);
  }
}
