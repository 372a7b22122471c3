/**
 * Bytes per second over a short sliding window, cheap enough to update on
 * every socket read: a ring of fixed-width time buckets.
 */
export class RateMeter {
  private readonly buckets: Float64Array;
  private readonly stamps: Float64Array;

  constructor(
    private readonly windowMs = 2_000,
    private readonly bucketMs = 250,
  ) {
    const count = Math.ceil(windowMs / bucketMs);
    this.buckets = new Float64Array(count);
    this.stamps = new Float64Array(count).fill(-1);
  }

  add(bytes: number, now = Date.now()): void {
    const slot = Math.floor(now / this.bucketMs);
    const i = slot % this.buckets.length;
    if (this.stamps[i] !== slot) {
      this.stamps[i] = slot;
      this.buckets[i] = 0;
    }
    this.buckets[i] += bytes;
  }

  /** Bytes per second over the window that ends now. */
  rate(now = Date.now()): number {
    const newest = Math.floor(now / this.bucketMs);
    const oldest = newest - this.buckets.length + 1;
    let sum = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      const slot = this.stamps[i];
      if (slot >= oldest && slot <= newest) sum += this.buckets[i];
    }
    return (sum * 1000) / this.windowMs;
  }
}
