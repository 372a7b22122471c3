/**
 * The memory budget shared by every transfer of one command: part buffers
 * are handed out first come, first served, and never more bytes than the
 * limit are out at once. Released buffers are kept and reused, because a
 * fresh 8–16 MiB buffer per part costs page faults (≈0.5 CPU-s per GiB).
 */
const MIN_CACHED_BUFFER = 1024 * 1024;

export class MemoryBudget {
  private inUse = 0;
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  private readonly waiters: { size: number; resolve: (buf: Buffer) => void; reject: (err: Error) => void }[] = [];
  private peak = 0;

  constructor(readonly limit: number) {}

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
    if (size > this.limit) {
      return Promise.reject(new RangeError(`a part of ${size} bytes does not fit in the memory budget of ${this.limit} bytes (raise --max-memory)`));
    }
    if (this.waiters.length === 0 && this.fits(size)) return Promise.resolve(this.take(size));
    return new Promise<Buffer>((resolve, reject) => {
      const waiter = { size, resolve, reject };
      this.waiters.push(waiter);
      signal?.addEventListener(
        "abort",
        () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) {
            this.waiters.splice(i, 1);
            reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
            this.serveWaiters();
          }
        },
        { once: true },
      );
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
    this.inUse -= buf.length;
    // Only part-sized buffers are worth keeping: small ones (small files of
    // every size) would fill the cache with sizes never asked for again.
    if (buf.length < MIN_CACHED_BUFFER) {
      this.serveWaiters();
      return;
    }
    const list = this.free.get(buf.length) ?? [];
    list.push(buf);
    this.free.set(buf.length, list);
    this.freeBytes += buf.length;
    this.serveWaiters();
  }

  private fits(size: number): boolean {
    return this.inUse + size <= this.limit;
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0].size)) {
      const waiter = this.waiters.shift()!;
      waiter.resolve(this.take(waiter.size));
    }
  }

  private take(size: number): Buffer {
    this.inUse += size;
    this.peak = Math.max(this.peak, this.inUse);
    const reusable = this.free.get(size);
    if (reusable && reusable.length > 0) {
      this.freeBytes -= size;
      return reusable.pop()!;
    }
    // Cached buffers of other sizes still hold memory: drop them until the new one fits.
    for (const [cachedSize, list] of this.free) {
      while (list.length > 0 && this.inUse + this.freeBytes > this.limit) {
        list.pop();
        this.freeBytes -= cachedSize;
      }
    }
    // allocUnsafeSlow: a part buffer must not come from (and pin) Node's small shared pool.
    return Buffer.allocUnsafeSlow(size);
  }
}
