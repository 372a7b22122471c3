/**
 * Decides when downloads write with blocking calls on the main thread, from
 * how long those calls take on this file system.
 *
 * Through Node's promise API every call is a trip to the libuv thread pool:
 * a wake-up of a pool thread and then of the event loop (in a VM each is an
 * inter-processor interrupt, trapped by the host). A blocking call skips
 * both, but stalls every request in flight for as long as it takes, and
 * some file systems are slow: ext4 without a journal needs ~1 ms per create
 * after a mass delete, network file systems more, and a disk behind on
 * writeback makes writers sleep. So calls block only while they stay fast:
 * until every one of the last WINDOW took more than the policy's limit (the
 * fastest of them, because on a busy machine a call takes milliseconds of
 * wall time in bursts, when the thread is preempted). Once slow, calls go
 * through the thread pool, and every PROBE_EVERY decisions one blocks to
 * measure again.
 *
 * Three policies per command (see writePolicies):
 * - Small files, one response each, timed over the calls after the create
 *   (write, utimes, close, rename). In a profile of 2,000 × 64 KiB
 *   downloads into tmpfs the main thread spent ~0.75 s dispatching them
 *   through the pool; the same calls made synchronously took ~160 µs per
 *   file in all.
 * - The create of each small file's temporary file, timed alone: on ext4
 *   here, once a directory tree was deleted, each create takes 0.3–1 ms
 *   (freeing and finding inodes) while the calls after it stay at ~80 µs.
 *   The create then goes through the pool and the rest still blocks: one
 *   trip to the pool per file instead of five.
 * - Ranged writes into a large file, timed per write call (at most
 *   MAX_WRITE_CALL bytes, write-calls.ts). 1 GiB in 256 KiB calls, one at a
 *   time, into ext4 here (bench/floor/write-calls.mjs): 0.31–0.43 CPU-s in
 *   all when blocking, against 0.68–0.95 through the pool, whose dispatching
 *   cost the main thread about as much (0.24–0.44 s) as making the calls
 *   itself (0.30–0.40 s).
 */
export const BLOCKING_LIMIT_US = 400;
/**
 * One ranged write call of 256 KiB: 1 ms is 256 MB/s. The page-cache copy
 * takes ~75 µs here, up to ~250 µs when its memory is cold; a call much
 * slower than that is waiting for the disk, which a pool thread should do.
 */
export const RANGE_CALL_LIMIT_US = 1000;
/** One create (open with O_CREAT | O_EXCL): ~30 µs here while the file system is fresh. */
export const CREATE_LIMIT_US = 200;
const PROBE_EVERY = 50;
const WINDOW = 8;

export class BlockingWrites {
  /** The last WINDOW timings, in microseconds (a ring). */
  private readonly recent: number[] = [];
  private next = 0;
  private slow = false;
  private sinceProbe = 0;

  constructor(private readonly limitUs = BLOCKING_LIMIT_US) {}

  /** Whether blocking calls are fast here, as last measured (asks nothing of the probe schedule). */
  get fast(): boolean {
    return !this.slow;
  }

  /** Whether the next file (or write) should use blocking calls. */
  shouldBlock(): boolean {
    if (!this.slow) return true;
    if (++this.sinceProbe < PROBE_EVERY) return false;
    this.sinceProbe = 0;
    return true;
  }

  /** How long one file's (or one write call's) blocking calls took, in all. */
  record(micros: number): void {
    this.recent[this.next] = micros;
    this.next = (this.next + 1) % WINDOW;
    this.slow = Math.min(...this.recent) > this.limitUs;
  }
}

/** The blocking-write policies one command's downloads share. */
export interface WritePolicies {
  /** Whole one-response files: every call after the create. */
  smallFiles: BlockingWrites;
  /** The create of a one-response file's temporary file (consulted only while `smallFiles` blocks). */
  creates: BlockingWrites;
  /** Each write call into a ranged (journaled) download's file. */
  ranges: BlockingWrites;
}

export function writePolicies(): WritePolicies {
  return { smallFiles: new BlockingWrites(BLOCKING_LIMIT_US), creates: new BlockingWrites(CREATE_LIMIT_US), ranges: new BlockingWrites(RANGE_CALL_LIMIT_US) };
}
