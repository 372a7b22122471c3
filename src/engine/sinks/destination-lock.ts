import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { ExclusiveLock, type LockHolder, type Verdict } from "../locks/exclusive-lock.js";

/** The suffix of the lock file beside a destination (`.NAME.s3x-lock`). */
export const LOCK_SUFFIX = ".s3x-lock";

/**
 * The lock of one download destination: the file `.NAME.s3x-lock` beside it
 * (an ExclusiveLock), also naming the holder's temporary file so that a run
 * taking over a dead holder's lock can remove what it left. Only the holder
 * touches the destination's journal or a leftover temporary file; a second
 * run to the same path is refused with one line naming the holder.
 */
export class DestinationLock extends ExclusiveLock {
  constructor(readonly finalPath: string) {
    super(join(dirname(finalPath), `.${basename(finalPath)}${LOCK_SUFFIX}`), (holder, verdict, lockPath) => downloadBusyMessage(finalPath, holder, verdict, lockPath));
  }
}

function downloadBusyMessage(finalPath: string, holder: LockHolder | undefined, verdict: Verdict, lockPath: string): string {
  if (!holder) return `${finalPath}: another process is starting a download to it (lock ${lockPath}); not touching it`;
  const who = `s3x process ${holder.pid}${holder.host === hostname() ? "" : ` on host ${holder.host}`} (started ${holder.started})`;
  const advice = verdict === "other-host" ? `; remove ${lockPath} if that process is gone` : "; wait for it to end";
  return `${finalPath}: ${who} is downloading to it (lock ${lockPath}); not touching it${advice}`;
}
