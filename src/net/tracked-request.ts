// One large request as the straggler watch (stragglers.ts) sees it: its payload progress and the evidence a verdict needs.
import { loopLag, type LagSource } from "./loop-lag.js";

/**
 * What the watch needs of an address (net/pools/ has the real thing): the
 * watch imports no pool module, so the pools can own a watch.
 */
export interface WatchedAddress {
  readonly address: string;
  readonly retired: boolean;
  /** When bytes last moved to or from it, in observed time (see loop-lag.ts). */
  readonly lastBytesAt: number;
  /** `stragglers` is counted here; `hedges` and `hedgesWon` by the hedger (engine/), through TrackedRequest.address. */
  readonly counters: { stragglers: number; hedges: number; hedgesWon: number };
  isBad(now?: number): boolean;
  /** Bytes per second in and out over the last two seconds, in wall time. */
  currentRate(now?: number): number;
  /** Remembers what went wrong, for --json and --debug. */
  noteProblem(problem: string): void;
}

/** What a tracked request asks of the watch that tracks it (the watch itself, in stragglers.ts). */
export interface RequestJudge {
  hedgeWorthy(request: TrackedRequest): boolean;
  judgeHedgeLoser(request: TrackedRequest): void;
}

/** A point of a request's progress history, taken at each check. */
interface ProgressSample {
  /** Wall time (ms). */
  wall: number;
  /** Observed time (wall minus event-loop lag so far, loop-lag.ts). */
  observed: number;
  /** Wall ms its reads had been held by s3x's own consumer, so far. */
  held: number;
  bytes: number;
}

/**
 * What a rate over a window needs to be evidence against the network
 * rather than against this process: see recentRate.
 */
export type RateVerdict = { rate: number } | { suspended: "too-young" | "loop-lag" };

/** One request with a large payload, as the watch sees it. */
export class TrackedRequest {
  /** Payload bytes moved so far (body sent, then body received). */
  bytes = 0;
  /** When the first payload byte moved; undefined before. */
  firstByteAt: number | undefined;
  lastProgressAt: number;
  cancelled = false;
  /** Wall time at the start, for the rate of a finished request. */
  readonly startedWallAt: number;
  /** Since when (wall ms) s3x's consumer holds the response's reads; undefined while they flow. */
  private heldSince: number | undefined;
  /** Wall ms of earlier holds, finished. */
  private heldBefore = 0;
  /**
   * Progress at each check, for the recent rate: an upload's first
   * megabytes vanish into kernel buffers at once. Rates are bytes over wall
   * time, but the window they are judged over must hold enough time in
   * which this process could read (see recentRate).
   */
  private readonly samples: ProgressSample[] = [];

  constructor(
    readonly address: WatchedAddress,
    /** Observed time (see loop-lag.ts) when the request started; all times here are observed. */
    readonly startedAt: number,
    /** Payload bytes expected; a request that has moved them all is only waiting for the server. */
    readonly expectedBytes: number,
    readonly cancel: (err: Error) => void,
    private readonly clock: LagSource = loopLag,
    private readonly judge?: RequestJudge,
  ) {
    this.lastProgressAt = startedAt;
    this.startedWallAt = clock.wallNow();
  }

  /** Whether a duplicate on another address would likely finish first (see StragglerWatch.hedgeWorthy). */
  hedgeWorthy(): boolean {
    return this.judge?.hedgeWorthy(this) ?? false;
  }

  /**
   * A hedged duplicate on another address answered first: it started later
   * (only once this request was far behind) and still won, so this address
   * is far slower than that one right now. It goes on the bad list for a
   * short cooldown, so the transfer's last small requests
   * (CompleteMultipartUpload) do not queue behind the link the duplicate
   * just escaped.
   */
  lostToHedge(): void {
    this.judge?.judgeHedgeLoser(this);
  }

  countAsHedge(won: boolean): void {
    this.address.counters.hedges++;
    if (won) this.address.counters.hedgesWon++;
  }

  progress(bytes: number, now = this.clock.observedNow()): void {
    this.firstByteAt ??= now;
    this.bytes += bytes;
    this.lastProgressAt = now;
  }

  /**
   * s3x's own consumer stopped (`held`) or restarted reading the response
   * (its part buffer is not ready, a slice is still being written). The
   * server's bytes then wait, unread, in the socket: that time is not the
   * network's, so it counts neither as silence nor in the request's rate.
   */
  holdReads(held: boolean, wall = this.clock.wallNow(), observed = this.clock.observedNow()): void {
    if (held) {
      this.heldSince ??= wall;
      return;
    }
    if (this.heldSince === undefined) return;
    this.heldBefore += Math.max(0, wall - this.heldSince);
    this.heldSince = undefined;
    // Bytes that waited in the socket are read now: as good as progress.
    this.lastProgressAt = Math.max(this.lastProgressAt, observed);
  }

  /** Whether the response's reads are held by s3x's consumer right now. */
  get readsHeld(): boolean {
    return this.heldSince !== undefined;
  }

  private heldMs(wall: number): number {
    return this.heldBefore + (this.heldSince === undefined ? 0 : Math.max(0, wall - this.heldSince));
  }

  /**
   * Records the progress so far (at each check), keeping history back to
   * the newest sample that still spans `windowMs` of readable time.
   */
  sample(wall: number, observed: number, windowMs: number): void {
    this.samples.push({ wall, observed, held: this.heldMs(wall), bytes: this.bytes });
    while (this.samples.length > 2 && this.readableSpan(this.samples[1], wall, observed) >= windowMs) this.samples.shift();
  }

  /**
   * The part of the time since `from` in which this process could have
   * read the request's bytes: neither lagging (observed time excludes lag)
   * nor holding its reads.
   */
  private readableSpan(from: ProgressSample, wall: number, observed: number): number {
    return observed - from.observed - (this.heldMs(wall) - from.held);
  }

  /**
   * The request's rate (bytes per wall ms, held time left out) over the
   * last `windowMs` or more of readable time, or why there is none to judge:
   *  - "too-young": not that much readable history yet;
   *  - "loop-lag": within that window the event loop lagged for longer than
   *    the window itself. The bytes the server sent meanwhile sat unread in
   *    the kernel (whose receive queue Node does not show), then TCP's flow
   *    control held the server back: such a rate measures this process.
   */
  recentRate(wall: number, observed: number, windowMs: number): RateVerdict {
    const oldest = this.samples[0];
    if (this.firstByteAt === undefined || !oldest || this.readableSpan(oldest, wall, observed) < windowMs) return { suspended: "too-young" };
    const lag = wall - oldest.wall - (observed - oldest.observed);
    if (lag > windowMs) return { suspended: "loop-lag" };
    const span = wall - oldest.wall - (this.heldMs(wall) - oldest.held);
    return { rate: (this.bytes - oldest.bytes) / Math.max(1, span) };
  }

  /** The recent rate when there is one to judge (see recentRate). */
  rateOrUndefined(wall: number, observed: number, windowMs: number): number | undefined {
    const verdict = this.recentRate(wall, observed, windowMs);
    return "rate" in verdict ? verdict.rate : undefined;
  }
}
