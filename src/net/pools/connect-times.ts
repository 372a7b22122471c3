// Connect durations seen on one host, and the happy-eyeballs delay they give.

/**
 * Happy-eyeballs delay bounds (RFC 8305 suggests 250 ms): an address whose
 * connect has not finished after this long, while others have, is passed
 * over until it connects. Within the bounds the delay follows the connect
 * times seen so far (4 × the median), so a far-away endpoint with slow
 * connects is not judged by loopback standards.
 */
const EYEBALLS_MIN_MS = 250;
const EYEBALLS_MAX_MS = 1_000;

/** Connect durations (ms) of one host, for the adaptive happy-eyeballs delay. */
export class ConnectTimes {
  private readonly samples: number[] = [];

  add(ms: number): void {
    this.samples.push(ms);
    if (this.samples.length > 32) this.samples.shift();
  }

  /** How long a connect may take before the address is passed over. */
  eyeballsDelay(): number {
    if (this.samples.length === 0) return EYEBALLS_MIN_MS;
    const sorted = [...this.samples].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    return Math.min(EYEBALLS_MAX_MS, Math.max(EYEBALLS_MIN_MS, 4 * median));
  }
}
