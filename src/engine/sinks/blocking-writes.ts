/**
 * Decides whether small files are written with blocking calls on the main
 * thread, from how long those calls take on this file system.
 *
 * Through Node's promise API a small file costs five trips to the libuv
 * thread pool (open, write, close, utimes, rename), each a wake-up of a pool
 * thread and then of the event loop. In a profile of 2,000 × 64 KiB
 * downloads into tmpfs the main thread spent ~0.75 s dispatching them; the
 * same calls made synchronously took ~160 µs per file in all. But a blocking
 * call stalls every request in flight for as long as it takes, and some file
 * systems are slow: ext4 without a journal needs ~1 ms per create after a
 * mass delete, network file systems more. So the calls block only while they
 * stay fast: until every one of the last WINDOW files took more than
 * BLOCKING_LIMIT_US (the fastest of them, because on a busy machine files
 * take milliseconds of wall time in bursts, when the thread is preempted).
 * Once slow, files go through the thread pool, and every PROBE_EVERY files
 * one blocking file measures again.
 */
export const BLOCKING_LIMIT_US = 400;
const PROBE_EVERY = 50;
const WINDOW = 8;

export class BlockingWrites {
  /** The last WINDOW files' blocking time, in microseconds (a ring). */
  private readonly recent: number[] = [];
  private next = 0;
  private slow = false;
  private sinceProbe = 0;

  /** Whether blocking calls are fast here, as last measured (asks nothing of the probe schedule). */
  get fast(): boolean {
    return !this.slow;
  }

  /** Whether the next small file should be written with blocking calls. */
  shouldBlock(): boolean {
    if (!this.slow) return true;
    if (++this.sinceProbe < PROBE_EVERY) return false;
    this.sinceProbe = 0;
    return true;
  }

  /** How long one small file's blocking calls took, in all. */
  record(micros: number): void {
    this.recent[this.next] = micros;
    this.next = (this.next + 1) % WINDOW;
    this.slow = Math.min(...this.recent) > BLOCKING_LIMIT_US;
  }
}
