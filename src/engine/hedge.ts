import type PQueue from "p-queue";
import type { MemoryBudget } from "./memory.js";
import type { RetryPacer } from "./pacer.js";
import type { AttemptRouting } from "../net/routing.js";

/**
 * Hedged requests at a transfer's tail ("The Tail at Scale", Dean and
 * Barroso; AWS's advice to retry the slowest few percent of large requests
 * on another connection).
 *
 * While the request queue is full, a slow part request costs little: the
 * others keep the links busy. Once the queue has drained and only a few
 * requests are left, the slowest one decides when the whole transfer ends.
 * Then a part request that the straggler watch finds far behind (a fresh
 * request elsewhere would finish well before it) gets a duplicate on
 * another address; the first complete answer wins and the other is
 * cancelled. Bytes count once: the loser's are dropped, and a download's
 * duplicate lands in a scratch buffer that is copied into the part buffer
 * only if it wins, after the original has stopped writing.
 */

/** One duplicate of an attempt in flight. */
export interface Duplicate<T> {
  /** Sends the duplicate (a request of its own, with its own retry-free fate) with the routing it is given. */
  run(routing: AttemptRouting): Promise<T>;
  /** The duplicate won and the original has stopped: make its result the attempt's. */
  adopt(result: T): T;
  /** Always called last, win or lose, once the duplicate has settled. */
  discard(): void;
}

export interface HedgeHook<T> {
  /** Where the tail is judged and hedges are counted (one per transfer context). */
  tail: TailHedger;
  /**
   * Prepares a duplicate of the attempt in flight, or undefined when none can
   * be made now (no memory for a scratch buffer). Without this hook the
   * attempt itself runs a second time: right for requests that write nothing
   * shared (an UploadPart sends the same bytes; the two copies' ETags may
   * differ, with SSE-KMS, so the uploader completes with the one S3
   * acknowledged last: engine/part-receipts.ts).
   */
  duplicate?: () => Duplicate<T> | undefined;
}

/** How often a request in flight is judged for a hedge. */
export const HEDGE_CHECK_MS = 250;
/** Part requests smaller than this are not hedged (the straggler watch ignores them too). */
export const HEDGE_MIN_BYTES = 1024 * 1024;
/** Most duplicates in flight at once per transfer context. */
const MAX_HEDGES_IN_FLIGHT = 8;

/**
 * Decides whether the transfer is at its tail and keeps the hedging
 * budget: the queue has nothing waiting and at most half its concurrency
 * (at least 2) is in flight, so duplicates use capacity the transfer no
 * longer needs; the endpoint is not throttling
 * (a throttled endpoint wants fewer requests, not more); at most a few
 * duplicates at once. One per transfer context (its `hedger` field), made
 * with the context's queue and the retry policy's pacer.
 */
export class TailHedger {
  inFlight = 0;
  sent = 0;
  won = 0;

  constructor(
    private readonly queue: PQueue,
    private readonly pacer?: RetryPacer,
  ) {}

  mayHedge(): boolean {
    if (this.inFlight >= MAX_HEDGES_IN_FLIGHT) return false;
    if (this.queue.size > 0 || this.queue.pending > Math.max(2, Math.ceil(this.queue.concurrency / 2))) return false;
    return this.pacer?.stats().limit === null || this.pacer === undefined;
  }
}

/** Why the slower of a request and its duplicate was stopped. */
export class HedgeLostError extends Error {
  override readonly name = "AbortError";
  constructor() {
    super("the hedged duplicate answered first");
  }
}

/** A hedge for a part request that can simply be sent twice (UploadPart); none for small ones. */
export function repeatHedge<T>(tail: TailHedger, payloadBytes: number): HedgeHook<T> | undefined {
  return payloadBytes >= HEDGE_MIN_BYTES ? { tail } : undefined;
}

/** What a ranged GET's hedge needs from the download: how far the original got, and where the rest goes. */
export interface RangeTarget<T> {
  /** Bytes of the range the original has written so far. */
  received(): number;
  /** Bytes of the whole range. */
  length: number;
  /** GETs range bytes [from, end] into `scratch` (from 0), counting into `onBytes`; no progress reporting. */
  fetch(from: number, scratch: Buffer, onBytes: (n: number) => void, routing: AttemptRouting): Promise<T>;
  /**
   * The duplicate won: `rest` holds the range's bytes after the original's
   * last (in the scratch buffer, reused once this returns); take them,
   * account them (progress) and return the attempt's result.
   */
  adopted(result: T, rest: Buffer): T;
}

/**
 * A hedge for a ranged GET into a part buffer: the duplicate asks for the
 * bytes the original has not delivered yet, into a scratch buffer from the
 * memory budget (no hedge if none is free now). If it wins, the original
 * has been stopped; the scratch bytes the original did not write are handed
 * to the download, so its buffers only ever have one writer at a time.
 */
export function rangeHedge<T>(tail: TailHedger, memory: MemoryBudget, target: RangeTarget<T>): HedgeHook<T> | undefined {
  if (target.length < HEDGE_MIN_BYTES) return undefined;
  return {
    tail,
    duplicate: () => {
      const from = target.received();
      const scratch = memory.tryAcquire(target.length);
      if (!scratch) return undefined;
      let got = 0;
      return {
        run: (routing) => target.fetch(from, scratch, (n) => (got += n), routing),
        adopt: (result) => {
          const done = target.received();
          // The original stopped at `done` ≥ `from`: hand on only what it lacks.
          return target.adopted(result, scratch.subarray(done - from, got));
        },
        discard: () => memory.release(scratch),
      };
    },
  };
}
