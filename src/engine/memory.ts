/**
 * The memory budget shared by every transfer of one command: part buffers
 * are handed out first come, first served, and never more bytes than the
 * limit are out at once. Released buffers are kept and reused, because fresh
 * memory costs page faults: ≈0.5 CPU-s per GiB of 8–16 MiB parts, and for
 * thousands of small objects (one buffer each) ~6 % of the main thread, as
 * glibc hands freed heap back to the kernel and takes it again.
 */
const MIN_CACHED_BUFFER = 1024 * 1024;
/**
 * Buffers under MIN_CACHED_BUFFER come from blocks of a power of two bytes
 * (at least this), so the next object of a similar size reuses a released
 * block instead of asking for fresh memory. The budget counts whole blocks.
 */
const MIN_BLOCK = 4096;

interface Waiter {
  size: number;
  /** Takes the waiter's share once it fits: a buffer handed out, or bytes only reserved (held in another thread). */
  serve: () => void;
  reject: (err: Error) => void;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("aborted");
}

export class MemoryBudget {
  private inUse = 0;
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  private readonly waiters: Waiter[] = [];
  private peak = 0;

  /**
   * `shared`: buffers live in SharedArrayBuffers, so that data-plane worker
   * threads (engine/workers) fill or send them where they are, without a copy.
   */
  constructor(
    readonly limit: number,
    private readonly shared = false,
  ) {}

  /** Bytes handed out right now. */
  get used(): number {
    return this.inUse;
  }

  /** Most bytes ever handed out at once. */
  get peakUsed(): number {
    return this.peak;
  }

  /**
   * A buffer of exactly `size` bytes, once the budget allows. Requests are
   * served strictly in order, so a transfer that asks for parts in order
   * gets them in order (the ordered stdout writer relies on that).
   */
  acquire(size: number, signal?: AbortSignal): Promise<Buffer> {
    const problem = this.oversized(size);
    if (problem) return Promise.reject(problem);
    if (this.waiters.length === 0 && this.fits(size)) return Promise.resolve(this.take(size));
    return this.waitFor(size, signal, () => this.take(size));
  }

  /**
   * Charges `size` bytes that are held elsewhere (a worker thread's slice
   * buffers: engine/workers) against the budget, in the same queue as
   * buffers, once it allows; `unreserve` gives them back.
   */
  reserve(size: number, signal?: AbortSignal): Promise<void> {
    const problem = this.oversized(size);
    if (problem) return Promise.reject(problem);
    if (this.waiters.length === 0 && this.fits(size)) {
      this.charged(size);
      return Promise.resolve();
    }
    return this.waitFor(size, signal, () => this.charged(size));
  }

  /** A reservation now if the budget allows it without waiting (and nobody waits ahead): for optional work, as tryAcquire. */
  tryReserve(size: number): boolean {
    if (size > this.limit || this.waiters.length > 0 || !this.fits(size)) return false;
    this.charged(size);
    return true;
  }

  unreserve(size: number): void {
    this.inUse -= size;
    this.serveWaiters();
  }

  private oversized(size: number): RangeError | undefined {
    if (size <= this.limit) return undefined;
    return new RangeError(`a part of ${size} bytes does not fit in the memory budget of ${this.limit} bytes (raise --max-memory)`);
  }

  private charged(size: number): void {
    this.inUse += size;
    this.peak = Math.max(this.peak, this.inUse);
    this.dropCachedOverLimit();
  }

  /** Cached buffers still hold memory: drop them until what is out and what is cached fit the limit. */
  private dropCachedOverLimit(): void {
    for (const [cachedSize, list] of this.free) {
      while (list.length > 0 && this.inUse + this.freeBytes > this.limit) {
        list.pop();
        this.freeBytes -= cachedSize;
      }
    }
  }

  private waitFor<T>(size: number, signal: AbortSignal | undefined, grant: () => T): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<T>((resolve, reject) => {
      // The listener goes as soon as the waiter is served: a command's signal
      // outlives thousands of waiters, and each left behind would pin its closure.
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        reject(abortReason(signal!));
        this.serveWaiters();
      };
      const waiter: Waiter = {
        // A reservation is charged its exact size (worker buffers are never small blocks).
        size,
        serve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(grant());
        },
        reject,
      };
      this.waiters.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * A buffer now if the budget allows it without waiting (and nobody is
   * waiting ahead), else undefined: for optional work such as a hedged
   * duplicate, which must never hold up the parts themselves.
   */
  tryAcquire(size: number): Buffer | undefined {
    if (size > this.limit || this.waiters.length > 0 || !this.fits(size)) return undefined;
    return this.take(size);
  }

  release(buf: Buffer): void {
    const charged = this.charge(buf.length);
    this.inUse -= charged;
    const whole = this.wholeBlock(buf, charged);
    if (whole) {
      const list = this.free.get(charged) ?? [];
      list.push(whole);
      this.free.set(charged, list);
      this.freeBytes += charged;
    }
    this.serveWaiters();
  }

  /**
   * What a buffer of `size` bytes counts against the budget: a part-sized
   * one its size, a small one its block (unless a block would not fit the
   * whole budget, as in tests with budgets of a few hundred bytes: then
   * its size).
   */
  private charge(size: number): number {
    if (size >= MIN_CACHED_BUFFER || size === 0) return size;
    const block = Math.max(MIN_BLOCK, 2 ** Math.ceil(Math.log2(size)));
    return block <= this.limit ? block : size;
  }

  /**
   * The reusable buffer behind a released one (a smaller one is a view of
   * its block), or undefined if none. A buffer of 512 KiB–1 MiB is charged a
   * whole 1 MiB block too: it is the block that goes back to the cache, never
   * the shorter view, or the next buffer taken from it would be shorter than
   * asked for (a `cat` of a prefix failed on such objects with "response body
   * longer than expected").
   */
  private wholeBlock(buf: Buffer, charged: number): Buffer | undefined {
    if (charged === 0) return undefined;
    if (buf.length === charged) return buf;
    if (buf.byteOffset !== 0 || buf.buffer.byteLength !== charged) return undefined;
    return Buffer.from(buf.buffer, 0, charged);
  }

  private fits(size: number): boolean {
    return this.inUse + this.charge(size) <= this.limit;
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0].size)) {
      this.waiters.shift()!.serve();
    }
  }

  private take(size: number): Buffer {
    const charged = this.charge(size);
    this.inUse += charged;
    this.peak = Math.max(this.peak, this.inUse);
    const reusable = this.free.get(charged);
    if (reusable && reusable.length > 0) {
      this.freeBytes -= charged;
      const block = reusable.pop()!;
      return size === charged ? block : block.subarray(0, size);
    }
    this.dropCachedOverLimit();
    // allocUnsafeSlow: a part buffer must not come from (and pin) Node's small shared pool.
    const block = this.shared ? Buffer.from(new SharedArrayBuffer(charged)) : Buffer.allocUnsafeSlow(charged);
    return size === charged ? block : block.subarray(0, size);
  }
}
