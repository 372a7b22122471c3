
/**
 * One attempt's routing, handed explicitly from the retry loop
 * (engine/retry.ts) through the S3 operation and the request layer
 * (s3/request.ts) to the transport (net/transport.ts), which reads which
 * addresses to avoid (those that just failed this request) and writes down
 * the address it chose, so a failure can name it.
 */
export interface AttemptRouting {
  /** Addresses this request already failed on; picked again only if nothing else is left. */
  readonly avoid: ReadonlySet<string>;
  /** Set by the transport: where the attempt went. */
  address?: string;
  /**
   * This attempt's own cancellation (linked to the caller's signal), used
   * instead of the caller's: a hedged request and its duplicate share the
   * caller's signal but the loser must be stopped alone (engine/hedge.ts).
   */
  signal?: AbortSignal;
  /**
   * Set by the transport for requests the straggler watch follows (a
   * TrackedRequest), or by a data-plane worker's proxy for an attempt it runs:
   * what the tail hedger (engine/retry.ts) asks of the request.
   */
  tracked?: HedgeView;
}

/** What the tail hedger asks of a request in flight. */
export interface HedgeView {
  /** Whether a duplicate on another address would likely finish first. */
  hedgeWorthy(): boolean;
  /** A duplicate elsewhere answered first (its address goes on the bad list for a short while). */
  lostToHedge(): void;
  /** This request was sent as a hedged duplicate: count it on its address, and whether it answered first (--json). */
  countAsHedge(won: boolean): void;
}
