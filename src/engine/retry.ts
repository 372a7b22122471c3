import { setTimeout as sleep } from "node:timers/promises";
import { describeFailure, type RequestFailure } from "../s3/errors.js";
import type { AttemptRouting } from "../net/routing.js";
import { childController } from "./child-controller.js";
import { HEDGE_CHECK_MS, HedgeLostError, type Duplicate, type HedgeHook } from "./hedge.js";
import type { FailureKind, RetryPacer } from "./pacer.js";

/** How often and how patiently one request is retried. */
export interface RetryPolicy {
  /** Total attempts, the first one included. */
  maxAttempts: number;
  /** Backoff base: attempt n waits a random time in [0, base × 2^n]. */
  baseDelayMs: number;
  /** Cap of the backoff window. */
  maxDelayMs: number;
  /** Retry pacing shared by every request to the endpoint (token bucket, adaptive limit); none: unpaced. */
  pacer?: RetryPacer;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 20_000 };

/** S3 error codes that are worth another try whatever the status says. */
const RETRYABLE_CODES = new Set([
  "SlowDown",
  "InternalError",
  "RequestTimeout",
  "RequestTimeTooSkewed",
  "ServiceUnavailable",
  "Throttling",
  "ThrottlingException",
  // s3x's own: a request cancelled for crawling far behind its siblings, to be re-sent elsewhere.
  "S3X_STRAGGLER",
  // s3x's own: a ranged GET answered with other bytes than asked for (a relay or cache that mangles Range); another try may get the right ones.
  "S3X_RANGE_MISMATCH",
  // s3x's own: a body longer than the range it was sent for (chunked, so its length was not known up front).
  "S3X_BODY_OVERFLOW",
]);

const THROTTLE_CODES = new Set(["SlowDown", "ServiceUnavailable", "Throttling", "ThrottlingException"]);

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

/**
 * What a failure says about the endpoint, in the CRT's classes: 503 and the
 * throttling codes ask us to slow down; other 5xx are server errors; network
 * failures, timeouts, stragglers and mismatched ranges or bodies are transient.
 */
export function failureKind(failure: RequestFailure): FailureKind {
  if (failure.status === 503 || (failure.code !== undefined && THROTTLE_CODES.has(failure.code))) return "throttle";
  if ((failure.status !== undefined && failure.status >= 500) || failure.code === "InternalError") return "server";
  if (failure.network || failure.code === "RequestTimeout" || failure.code === "S3X_STRAGGLER" || failure.code === "S3X_RANGE_MISMATCH" || failure.code === "S3X_BODY_OVERFLOW") return "transient";
  return "other";
}

/** Full-jitter exponential backoff (the CRT's and AWS's recommendation). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const window = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * window);
}

/** A request that failed for good: what, why, where, and after how many attempts. */
export class RequestError extends Error {
  constructor(
    readonly operation: string,
    readonly failure: RequestFailure,
    readonly attempts: number,
    override readonly cause: unknown,
    /** Every address the attempts went to, in order of first use. */
    readonly addresses: readonly string[] = failure.address ? [failure.address] : [],
    /** Why no further attempt was made, when not for running out of attempts. */
    readonly stoppedBecause?: string,
  ) {
    const where = failure.address ? ` via ${failure.address}` : "";
    const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
    const others = addresses.filter((a) => a !== failure.address);
    const alsoTried = others.length > 0 ? ` (also tried ${others.join(", ")})` : "";
    const stopped = stoppedBecause ? `; ${stoppedBecause}` : "";
    super(`${operation}: ${failure.message}${where}${tries}${alsoTried}${stopped}`);
  }
}

export interface RetryHooks {
  signal?: AbortSignal;
  /** Called before each retry, e.g. to count retries for stats. */
  onRetry?: (failure: RequestFailure, attempt: number) => void;
  /**
   * Attempts in flight wait for this request: it never waits for a slot
   * under the pacer's limit (RetryPacer.begin), though it still pays into
   * and teaches the pacer.
   */
  urgent?: boolean;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or
 * runs out of attempts. `attempt` receives the attempt number (0-based) so a
 * ranged GET can resume where the previous attempt's bytes stopped.
 *
 * Each attempt is handed its routing (net/routing.ts), which it passes to
 * the S3 operation it sends: the addresses earlier attempts failed on are
 * avoided while another one is available, and the address used is
 * remembered for the error message. With a pacer, every attempt
 * waits for a slot under the endpoint's adaptive limit and every retry pays
 * into the endpoint's token bucket.
 *
 * With `hedge`, an attempt that straggles at the transfer's tail may get a
 * hedged duplicate on another address (engine/hedge.ts). `hooks.signal`
 * must then be the signal the attempt's requests are sent with: each of the
 * two gets a signal of its own linked to it, so the loser can be stopped alone.
 */
export async function withRetries<T>(
  operation: string,
  policy: RetryPolicy,
  attempt: (n: number, routing: AttemptRouting) => Promise<T>,
  hooks: RetryHooks = {},
  hedge?: HedgeHook<NoInfer<T>>,
): Promise<T> {
  const avoid = new Set<string>();
  const tried: string[] = [];
  const pacer = policy.pacer;
  for (let n = 0; ; n++) {
    const routing: AttemptRouting = { avoid };
    const slot = await pacer?.begin(hooks.signal, hooks.urgent);
    try {
      const result = hedge ? await hedged(routing, (r) => attempt(n, r), hedge, hooks.signal) : await attempt(n, routing);
      if (slot) pacer?.finish(slot, "success");
      return result;
    } catch (err) {
      const failure = describeFailure(err);
      // Where a retryable failure happened matters (routing around it, the
      // final message); a 404 or 412 is the same on every address.
      if (isRetryable(failure)) failure.address ??= routing.address;
      if (slot) pacer?.finish(slot, hooks.signal?.aborted ? "other" : failureKind(failure));
      if (hooks.signal?.aborted) throw hooks.signal.reason ?? err;
      if (err instanceof RequestError) throw err;
      if (failure.address && !tried.includes(failure.address)) tried.push(failure.address);
      if (!isRetryable(failure) || n + 1 >= policy.maxAttempts) throw new RequestError(operation, failure, n + 1, err, tried);
      if (pacer && !pacer.takeRetryToken(failureKind(failure))) {
        throw new RequestError(operation, failure, n + 1, err, tried, "no retry left in the endpoint's retry budget (too many failures across the transfer)");
      }
      if (failure.address) avoid.add(failure.address);
      hooks.onRetry?.(failure, n + 1);
      await sleep(backoffDelay(n, policy), undefined, { signal: hooks.signal });
    }
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

function outcome<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

interface RunningDuplicate<T> {
  routing: AttemptRouting;
  work: Duplicate<T>;
  link: { controller: AbortController; dispose: () => void };
  outcome: Promise<Outcome<T>>;
}

/**
 * One attempt that may get a hedged duplicate (engine/hedge.ts): every
 * HEDGE_CHECK_MS, once the attempt's request is followed by the straggler
 * watch, it is hedged if the transfer is at its tail and the watch finds it
 * far behind. The first to succeed wins; the other is cancelled through its
 * own signal and awaited before the winner's result is used, so a loser
 * never writes after the fact. If the first to finish failed, the other may
 * still win; if both fail, the original's failure goes to the retry loop.
 */
async function hedged<T>(routing: AttemptRouting, attempt: (routing: AttemptRouting) => Promise<T>, hook: HedgeHook<T>, signal: AbortSignal | undefined): Promise<T> {
  const tail = hook.tail;
  const original = childController(signal);
  routing.signal = original.controller.signal;
  const primary = outcome(attempt(routing));
  let poll: NodeJS.Timeout | undefined;
  const started = new Promise<RunningDuplicate<T>>((resolve) => {
    poll = setInterval(() => {
      if (!routing.tracked || routing.address === undefined) return;
      if (!tail.mayHedge() || !routing.tracked.hedgeWorthy()) return;
      const work: Duplicate<T> | undefined = hook.duplicate ? hook.duplicate() : { run: attempt, adopt: (r) => r, discard: () => undefined };
      if (!work) return;
      clearInterval(poll);
      const link = childController(signal);
      const hedgeRouting: AttemptRouting = { avoid: new Set([...routing.avoid, routing.address]), signal: link.controller.signal };
      tail.inFlight++;
      tail.sent++;
      resolve({ routing: hedgeRouting, work, link, outcome: outcome(work.run(hedgeRouting)) });
    }, HEDGE_CHECK_MS);
    poll.unref();
  });
  /** Counts the settled duplicate on the address it went to (--json) and frees what it held. */
  const close = (d: RunningDuplicate<T>, won: boolean): void => {
    tail.inFlight--;
    if (won) tail.won++;
    d.routing.tracked?.countAsHedge(won);
    d.link.dispose();
    d.work.discard();
  };
  const unwrap = (o: Outcome<T>): T => {
    if (o.ok) return o.value;
    throw o.error;
  };
  try {
    const first = await Promise.race([primary, started]);
    if (!("work" in first)) return unwrap(first);
    const d = first;
    clearInterval(poll);
    const winner = await Promise.race([primary.then((o) => ({ hedge: false, o })), d.outcome.then((o) => ({ hedge: true, o }))]);
    if (!winner.hedge && winner.o.ok) {
      d.link.controller.abort(new HedgeLostError());
      await d.outcome;
      close(d, false);
      return winner.o.value;
    }
    if (winner.hedge && winner.o.ok) {
      // Stop the original and wait until it can no longer write, then take the duplicate's answer.
      original.controller.abort(new HedgeLostError());
      routing.tracked?.lostToHedge();
      await primary;
      try {
        return d.work.adopt(winner.o.value);
      } finally {
        close(d, true);
      }
    }
    // The first to finish failed: the other may still deliver.
    if (winner.hedge) {
      close(d, false);
      return unwrap(await primary);
    }
    const late = await d.outcome;
    if (!late.ok) {
      close(d, false);
      return unwrap(winner.o);
    }
    routing.tracked?.lostToHedge();
    try {
      return d.work.adopt(late.value);
    } finally {
      close(d, true);
    }
  } finally {
    clearInterval(poll);
    original.dispose();
  }
}
