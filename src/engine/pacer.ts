/**
 * Retry pacing shared by every request to one endpoint, so that a storm of
 * 503 SlowDown slows the whole transfer down instead of multiplying its
 * requests. Two mechanisms, both from practice:
 *
 *  - A retry token bucket, as in the AWS CRT (aws-c-s3's standard retry
 *    strategy): capacity 500; a retry after a throttle or server error
 *    costs 5 tokens, after a transient (network) error 10; each success
 *    refunds 1. An empty bucket means the endpoint is failing far more than
 *    it succeeds: further retries are refused and the request fails at once.
 *
 *  - An adaptive limit on attempts in flight (additive increase,
 *    multiplicative decrease, as TCP does with its window): each throttle
 *    halves the number of attempts allowed at once, each success lets it
 *    grow by one per window, and once it is back above what the transfer
 *    ever needed the limit disappears. Throttles of attempts that started
 *    before the last decrease do not count again: they were sent under the
 *    old limit.
 *
 * Why not the AWS SDK's StandardRetryStrategy (@smithy/core 3.41): it decides
 * retries of SDK commands, and s3x's requests are its own (s3/request.ts)
 * with per-attempt resume and routing (engine/retry.ts). It has no limit on attempts in flight, and
 * its bucket differs (3 attempts; 14 tokens per transient or 5xx retry, 5 per
 * throttle; 50 ms / 1 s backoff bases; its backoff sleep ignores any abort
 * signal). The limit is what matters under SlowDown: 1,000 × 64 KiB
 * downloads at --concurrency 64 from a radosgw allowing 8 requests at once
 * (bench/ab.ts, 2 runs of 5 interleaved pairs) all finished with it (10 of
 * 10; client CPU-s medians 3.23 and 3.05), while with the bucket and backoff
 * alone 8 of 10 failed (exit 1: objects not transferred).
 */
export type FailureKind = "throttle" | "server" | "transient" | "other";

export interface PacerOptions {
  capacity: number;
  throttleCost: number;
  transientCost: number;
  successRefund: number;
}

export const CRT_PACER_OPTIONS: PacerOptions = { capacity: 500, throttleCost: 5, transientCost: 10, successRefund: 1 };

/** One attempt holding a slot; hand it back with `finish`. */
export interface PacedAttempt {
  readonly startedAt: number;
}

export interface PacerStats {
  /** Attempts the endpoint answered with throttling (503 SlowDown and friends). */
  throttles: number;
  /** Attempts allowed in flight now; null when unlimited. */
  limit: number | null;
  tokens: number;
  /** Retries refused because the bucket was empty. */
  refusedRetries: number;
}

export class RetryPacer {
  private tokens: number;
  private limit = Infinity;
  private running = 0;
  private peakRunning = 0;
  private lastDecreaseAt = -Infinity;
  private throttles = 0;
  private refusedRetries = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly options: PacerOptions = CRT_PACER_OPTIONS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = options.capacity;
  }

  /**
   * Waits until one more attempt may be in flight. An `urgent` attempt, one
   * that attempts already in flight wait for (the HEAD that fetches the
   * stored checksum a download's slices are hashed against), takes its slot
   * at once, above the limit: made to wait for a slot that those attempts
   * hold, it would wait for ever.
   */
  async begin(signal?: AbortSignal, urgent = false): Promise<PacedAttempt> {
    signal?.throwIfAborted();
    if (urgent || this.running < Math.floor(this.limit)) {
      this.running++;
    } else {
      // The slot is handed over by finish() (running already counts it), in arrival order.
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          const i = this.waiting.indexOf(wake);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
        };
        const wake = (): void => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    this.peakRunning = Math.max(this.peakRunning, this.running);
    return { startedAt: this.now() };
  }

  /** The attempt is over: `success`, or the kind of failure it met. */
  finish(attempt: PacedAttempt, outcome: "success" | FailureKind): void {
    const inFlight = this.running;
    this.running--;
    if (outcome === "success") {
      this.tokens = Math.min(this.options.capacity, this.tokens + this.options.successRefund);
      if (Number.isFinite(this.limit)) {
        this.limit += 1 / Math.max(1, this.limit);
        if (this.limit > this.peakRunning) this.limit = Infinity;
      }
    } else if (outcome === "throttle") {
      this.throttles++;
      if (attempt.startedAt >= this.lastDecreaseAt) {
        this.limit = Math.max(1, Math.floor(Math.min(this.limit, inFlight) / 2));
        this.lastDecreaseAt = this.now();
      }
    }
    this.wakeWaiters();
  }

  /** Takes the tokens a retry after this kind of failure costs; false when the bucket cannot pay. */
  takeRetryToken(kind: FailureKind): boolean {
    const cost = kind === "transient" ? this.options.transientCost : this.options.throttleCost;
    if (this.tokens < cost) {
      this.refusedRetries++;
      return false;
    }
    this.tokens -= cost;
    return true;
  }

  stats(): PacerStats {
    return { throttles: this.throttles, limit: Number.isFinite(this.limit) ? Math.floor(this.limit) : null, tokens: this.tokens, refusedRetries: this.refusedRetries };
  }

  private wakeWaiters(): void {
    while (this.waiting.length > 0 && this.running < Math.floor(this.limit)) {
      this.running++;
      this.waiting.shift()?.();
    }
  }
}
