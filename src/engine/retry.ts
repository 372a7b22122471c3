import { setTimeout as sleep } from "node:timers/promises";
import { describeFailure, type RequestFailure } from "../s3/errors.js";

/** How often and how patiently one request is retried. */
export interface RetryPolicy {
  /** Total attempts, the first one included. */
  maxAttempts: number;
  /** Backoff base: attempt n waits a random time in [0, base × 2^n]. */
  baseDelayMs: number;
  /** Cap of the backoff window. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 20_000 };

/** S3 error codes that are worth another try whatever the status says. */
const RETRYABLE_CODES = new Set(["SlowDown", "InternalError", "RequestTimeout", "RequestTimeTooSkewed", "ServiceUnavailable", "Throttling", "ThrottlingException"]);

/**
 * Whether a failed request may succeed if sent again: server errors (500),
 * throttling (503), the transient S3 codes (also when they arrive inside a
 * 200, as CompleteMultipartUpload can), and network failures: resets,
 * refused connects, timeouts, truncated bodies. Never other 4xx: those are
 * the caller's mistake and will fail the same way again.
 */
export function isRetryable(failure: RequestFailure): boolean {
  if (failure.code && RETRYABLE_CODES.has(failure.code)) return true;
  if (failure.status !== undefined) return failure.status === 500 || failure.status === 502 || failure.status === 503 || failure.status === 504;
  return failure.network;
}

/** Full-jitter exponential backoff (the CRT's and AWS's recommendation). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const window = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * window);
}

/** A request that failed for good: what, why, and after how many attempts. */
export class RequestError extends Error {
  constructor(
    readonly operation: string,
    readonly failure: RequestFailure,
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    const where = failure.address ? ` via ${failure.address}` : "";
    const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
    super(`${operation}: ${failure.message}${where}${tries}`);
  }
}

export interface RetryHooks {
  signal?: AbortSignal;
  /** Called before each retry, e.g. to count retries for stats. */
  onRetry?: (failure: RequestFailure, attempt: number) => void;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or
 * runs out of attempts. `attempt` receives the attempt number (0-based) so a
 * ranged GET can resume where the previous attempt's bytes stopped.
 */
export async function withRetries<T>(operation: string, policy: RetryPolicy, attempt: (n: number) => Promise<T>, hooks: RetryHooks = {}): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (hooks.signal?.aborted) throw hooks.signal.reason ?? err;
      if (err instanceof RequestError) throw err;
      const failure = describeFailure(err);
      if (!isRetryable(failure) || n + 1 >= policy.maxAttempts) throw new RequestError(operation, failure, n + 1, err);
      hooks.onRetry?.(failure, n + 1);
      await sleep(backoffDelay(n, policy), undefined, { signal: hooks.signal });
    }
  }
}
