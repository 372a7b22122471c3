/** What an in-order writer reports as it goes (to size how far the downloads run ahead). */
export interface WriterWatcher {
  /** The destination took `bytes` in `ms`. */
  wrote(bytes: number, ms: number): void;
  /** Every part that had arrived is written and the next is missing (never before the first write). */
  ranDry(): void;
}

/**
 * How many parts the downloads of an in-order destination (stdout, a pipe,
 * `s3x cat`) may run ahead of what has been written: sized by the reader's
 * pace, not by the network's.
 *
 * The window starts small. Each time the writer has written everything it
 * holds and the next part is not there (the reader is about to wait on the
 * network), it grows to what keeps the reader fed by Little's law: the
 * reader's rate times how long a part takes to arrive once it may be
 * fetched, in parts, plus the one being written; at least double, at most
 * `max`. A reader slower than the network (a hash, a decompressor, a data
 * loader) never runs dry, so only a few parts are fetched at a time: the
 * first part does not share the link with 28 others, fewer connections burn
 * less CPU beside the reader, and less memory waits in buffers. A reader
 * faster than the network runs dry once or twice in the first parts and then
 * runs with the window it needs.
 *
 * It never shrinks: the window is only ever as large as some moment of the
 * transfer needed, and `max` bounds memory either way.
 */
export class ReadAhead {
  private current: number;
  private readonly grantedAt = new Map<number, number>();
  /** Recent means (exponentially weighted): part fetch time, part size, and the reader's bytes and time per write. */
  private fetchMs: number | undefined;
  private partBytes: number | undefined;
  private writeBytes: number | undefined;
  private writeMs: number | undefined;

  constructor(
    /** The most parts ahead (every connection busy, or the memory budget's share). */
    readonly max: number,
    initial: number = INITIAL_READ_AHEAD,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.current = Math.max(1, Math.min(max, initial));
  }

  /** A fixed window (tests, and callers that size it themselves). */
  static fixed(window: number): ReadAhead {
    return new ReadAhead(window, window);
  }

  /** `window` itself, or a fixed window of that many parts. */
  static of(window: number | ReadAhead): ReadAhead {
    return typeof window === "number" ? ReadAhead.fixed(window) : window;
  }

  /** What an in-order writer tells this: its writes time the reader; running dry grows the window, then `wake` lets waiting parts go. */
  watcher(wake: () => void): WriterWatcher {
    return {
      wrote: (bytes, ms) => this.wrote(bytes, ms),
      ranDry: () => {
        if (this.starved()) wake();
      },
    };
  }

  /** Parts that may be fetched ahead of the writer now. */
  get window(): number {
    return this.current;
  }

  /** Part `part` may be fetched from now on. */
  granted(part: number): void {
    if (this.current < this.max) this.grantedAt.set(part, this.clock());
  }

  /** Part `part` arrived (`bytes` long): its fetch took since it was granted. */
  arrived(part: number, bytes: number): void {
    const since = this.grantedAt.get(part);
    if (since === undefined) return;
    this.grantedAt.delete(part);
    this.fetchMs = mean(this.fetchMs, this.clock() - since);
    this.partBytes = mean(this.partBytes, bytes);
  }

  /** The destination took `bytes` in `ms` (how fast the reader reads). */
  wrote(bytes: number, ms: number): void {
    this.writeBytes = mean(this.writeBytes, bytes);
    this.writeMs = mean(this.writeMs, ms);
  }

  /** The writer ran out of parts to write: fetch further ahead. Returns whether the window grew. */
  starved(): boolean {
    if (this.current >= this.max) return false;
    let next = this.current * 2;
    if (this.fetchMs !== undefined && this.partBytes && this.writeBytes && this.writeMs !== undefined) {
      // Bytes the reader takes while one part is fetched, in parts, plus the part being written.
      const readerBytesPerMs = this.writeBytes / Math.max(this.writeMs, 0.05);
      next = Math.max(next, Math.ceil((readerBytesPerMs * this.fetchMs) / this.partBytes) + 1);
    }
    this.current = Math.min(this.max, next);
    if (this.current >= this.max) this.grantedAt.clear(); // nothing left to size
    return true;
  }
}

/** Parts fetched ahead at first: two, so one is written while the next arrives. */
export const INITIAL_READ_AHEAD = 2;

/** Weight of the newest sample in a running mean: a few parts decide it. */
const NEWEST = 0.3;

function mean(previous: number | undefined, sample: number): number {
  return previous === undefined ? sample : previous + NEWEST * (sample - previous);
}

/**
 * The parts that wait to be fetched until they are within the read-ahead
 * window of the writer: one object's parts (OrderedWriter) or the parts of
 * many objects (ObjectStream). Each part let go is granted to the ReadAhead,
 * which times its fetch from then.
 */
export class FetchGate {
  private waiters: { part: number; resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(private readonly readAhead: ReadAhead) {}

  /** Resolves once `part` is fewer than the window ahead of the `written` parts. */
  wait(part: number, written: number): Promise<void> {
    if (part < written + this.readAhead.window) {
      this.readAhead.granted(part);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiters.push({ part, resolve, reject }));
  }

  /** Lets go the waiting parts now within the window of the `written` parts. */
  open(written: number): void {
    const limit = written + this.readAhead.window;
    const ready = this.waiters.filter((w) => w.part < limit);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.part >= limit);
    for (const waiter of ready) {
      this.readAhead.granted(waiter.part);
      waiter.resolve();
    }
  }

  /** Every waiting part fails with `err`. */
  fail(err: Error): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }
}
