import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { link, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { basename } from "node:path";

/** What a lock file holds: which process holds it (and, for a download, the temporary file it writes). */
export interface LockHolder {
  pid: number;
  host: string;
  /** The holder's script path (process.argv[1]): tells a reused pid from the holder itself. */
  command: string;
  /** ISO time the lock was taken. */
  started: string;
  /** Base name of the holder's temporary file, in the destination's directory ("" for an upload). */
  temp: string;
}

/** Another s3x process holds the destination's lock: this run is refused (one line, from the lock's user). */
export class DestinationBusyError extends Error {
  readonly code = "S3X_DESTINATION_BUSY";
  constructor(
    message: string,
    /** The holder as read from its lock, if it was readable. */
    readonly holder?: LockHolder,
  ) {
    super(message);
  }

  get pid(): number | undefined {
    return this.holder?.pid;
  }
}

/** How a lock's user words a refusal (what the holder is doing to what). */
export type BusyMessage = (holder: LockHolder | undefined, verdict: Verdict, lockPath: string) => string;

/** How many times a lock found stale is taken over before giving up (others may race for it too). */
const TAKEOVER_ATTEMPTS = 5;
/** An unreadable lock (torn by a crash) older than this is stale; a younger one is being written. */
const UNREADABLE_STALE_MS = 10_000;
/** How long, and how often, a lock still being written is read again before the run is refused. */
const UNREADABLE_WAIT_MS = 5_000;
const UNREADABLE_POLL_MS = 20;

/**
 * An exclusive lock file at a given path, created with O_EXCL and holding
 * the owner's pid, host and command. Used beside a download's destination
 * (sinks/destination-lock.ts) and in the state directory for an upload's key
 * (resume/upload-lock.ts). A lock whose holder is dead (same host, pid gone
 * or reused by another program) is stale and taken over; a lock from
 * another host cannot be judged from here and is left to the user.
 *
 * Taking over is made safe against a second run taking it over at the same
 * time: the stale file is renamed aside and compared with what was judged
 * stale; a lock created meanwhile is put back (link(): never over another).
 *
 * Cost: a create and an unlink, 60-90 µs of CPU with blocking calls and
 * 150-230 µs through the thread pool (ext4, loaded machine).
 */
export class ExclusiveLock {
  private ownText: string | undefined;

  constructor(
    readonly path: string,
    private readonly busyMessage: BusyMessage,
  ) {}

  get held(): boolean {
    return this.ownText !== undefined;
  }

  /**
   * Takes the lock, recording `temp` (a base name, or ""). `blocking`: the
   * first try (the only one unless the lock is taken) uses blocking calls.
   * Throws DestinationBusyError while a live process holds it. Returns the dead holder's record when a stale lock
   * was taken over (its temporary file may be left to clean up).
   */
  async acquire(temp: string, debug: (line: string) => void, blocking = false): Promise<LockHolder | undefined> {
    if (this.held) return undefined;
    const text = JSON.stringify({ pid: process.pid, host: hostname(), command: process.argv[1] ?? "", started: new Date().toISOString(), temp } satisfies LockHolder) + "\n";
    let takenOver: LockHolder | undefined;
    let last: { found: Found; verdict: Verdict } | undefined;
    const lookAgainUntil = Date.now() + UNREADABLE_WAIT_MS;
    for (let attempt = 0; attempt <= TAKEOVER_ATTEMPTS; ) {
      if (await this.create(text, blocking && attempt === 0 && last === undefined)) {
        this.ownText = text;
        return takenOver;
      }
      const found = await this.readHolder();
      if (found === "gone") {
        attempt++; // released between our try and the read
        continue;
      }
      const verdict = await judge(found);
      last = { found, verdict };
      // A lock just created is empty for a moment (its writer is between open and write): look again.
      if (!found.holder && verdict === "alive" && Date.now() < lookAgainUntil) {
        await delay(UNREADABLE_POLL_MS);
        continue;
      }
      if (verdict !== "dead") break;
      attempt++;
      if (await this.removeIfUnchanged(found.text)) {
        const who = found.holder ? `s3x process ${found.holder.pid} (started ${found.holder.started})` : "a process that left it unreadable";
        debug(`${this.path}: taking over the stale lock of ${who}, which is no longer running`);
        takenOver = found.holder ?? takenOver;
      }
    }
    // Held by a live process, or others kept taking it first.
    throw last ? new DestinationBusyError(this.busyMessage(last.found.holder, last.verdict, this.path), last.found.holder) : new DestinationBusyError(`${this.path}: the lock keeps changing hands; not touching it`);
  }

  /** Gives the lock up (after the destination was published or cleaned up). */
  async release(blocking = false): Promise<void> {
    if (!this.held) return;
    this.ownText = undefined;
    if (blocking) rmQuietSync(this.path);
    else await unlink(this.path).catch(() => undefined);
  }

  /**
   * Creates the lock file with our record; false when one exists. A record
   * that cannot be written (a full disk) takes its empty file away again:
   * left behind, it would hold the destination for UNREADABLE_STALE_MS and
   * stay beside it for good. (Readable by all, 0644: a refused run of
   * another user names the holder from it; it holds no object data.)
   */
  private async create(text: string, blocking: boolean): Promise<boolean> {
    try {
      if (blocking) {
        const fd = openSync(this.path, "wx", 0o644);
        try {
          writeSync(fd, text);
        } catch (err) {
          rmQuietSync(this.path);
          throw err;
        } finally {
          closeSync(fd);
        }
      } else {
        const handle = await open(this.path, "wx", 0o644);
        try {
          await handle.writeFile(text);
        } catch (err) {
          await unlink(this.path).catch(() => undefined);
          throw err;
        } finally {
          await handle.close();
        }
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
  }

  /** The lock file's record as found (its text, to compare before removing it), or "gone". */
  private async readHolder(): Promise<Found | "gone"> {
    let text: string;
    let mtimeMs: number;
    try {
      text = await readFile(this.path, "utf8");
      mtimeMs = (await stat(this.path)).mtimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return "gone";
      throw err;
    }
    return { text, holder: parseHolder(text), mtimeMs };
  }

  /** Removes the lock file if it still holds `staleText`; true when it did (or it was gone). */
  private async removeIfUnchanged(staleText: string): Promise<boolean> {
    const aside = `${this.path}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await rename(this.path, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return true;
      throw err;
    }
    const moved = await readFile(aside, "utf8").catch(() => "");
    if (moved !== staleText) {
      // Another run took the lock between our read and the rename: give it back.
      await link(aside, this.path).catch(() => undefined);
      await unlink(aside).catch(() => undefined);
      return false;
    }
    await unlink(aside).catch(() => undefined);
    return true;
  }
}

interface Found {
  text: string;
  holder: LockHolder | undefined;
  mtimeMs: number;
}

/** Whether a lock's holder runs: "other-host" cannot be judged from here. */
export type Verdict = "alive" | "dead" | "other-host";

function parseHolder(text: string): LockHolder | undefined {
  // Upload locks of earlier releases held only the pid.
  if (/^\d+\n?$/.test(text)) return { pid: Number(text), host: hostname(), command: "", started: "", temp: "" };
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid !== "number" || typeof value.host !== "string") return undefined;
    return { pid: value.pid, host: value.host, command: String(value.command ?? ""), started: String(value.started ?? ""), temp: typeof value.temp === "string" ? value.temp : "" };
  } catch {
    return undefined;
  }
}

/** Whether the lock's holder still runs. */
async function judge(found: Found): Promise<Verdict> {
  const { holder } = found;
  if (!holder) return Date.now() - found.mtimeMs > UNREADABLE_STALE_MS ? "dead" : "alive";
  if (holder.host !== hostname()) return "other-host";
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM" ? "alive" : "dead";
  }
  // The pid runs, but after a crash it may be another program's now: Linux tells us which.
  // (Base names: the same script may have been started by a relative path.)
  const command = await readFile(`/proc/${holder.pid}/cmdline`, "utf8").catch(() => undefined);
  if (command === undefined || holder.command === "") return "alive";
  return command.split("\0").some((arg) => basename(arg) === basename(holder.command)) ? "alive" : "dead";
}

function rmQuietSync(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
