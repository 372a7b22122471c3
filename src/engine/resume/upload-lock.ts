import { makeDirectories } from "../local-directories.js";
import { join } from "node:path";
import type { ObjectRef } from "../../s3/operations.js";
import { ExclusiveLock, type LockHolder, type Verdict } from "../locks/exclusive-lock.js";
import { destinationPrefix, uploadsDirectory } from "./upload-journal.js";

/**
 * One s3x at a time per destination key for resumable uploads: an
 * ExclusiveLock next to the upload records (`<destination>.lock`). Without
 * it two runs to one key could both find the same interrupted upload and both
 * continue it, or one could abort the other's upload as obsolete. A lock left
 * by a process that is gone (kill -9) is taken over.
 */
export interface UploadLock {
  release(): Promise<void>;
}

/** Takes the lock of `endpoint`/`ref`, or throws DestinationBusyError (locks/exclusive-lock.ts). */
export async function lockDestination(endpoint: string, ref: ObjectRef): Promise<UploadLock> {
  const dir = uploadsDirectory();
  await makeDirectories(dir, 0o700);
  const lock = new ExclusiveLock(join(dir, `${destinationPrefix(endpoint, ref)}.lock`), uploadBusyMessage);
  await lock.acquire("", () => undefined);
  return { release: () => lock.release() };
}

/** The command line names the source and destination before this message. */
function uploadBusyMessage(holder: LockHolder | undefined, verdict: Verdict, lockPath: string): string {
  if (!holder) return `another process is starting an upload to this key (lock ${lockPath}); run this again once it has finished`;
  const where = verdict === "other-host" ? ` on host ${holder.host}` : "";
  const advice = verdict === "other-host" ? `; remove ${lockPath} if that process is gone` : "; run this again once it has finished";
  return `another s3x (pid ${holder.pid}${where}) is uploading to this key right now${advice}`;
}
