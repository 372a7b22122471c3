// One front-end address's health and traffic: bad list, probation, reachability, counters, rate.
import { RateMeter } from "../rate-meter.js";
import { loopLag } from "../loop-lag.js";
import type { ConnectTimes } from "./connect-times.js";

/**
 * An address that failed is avoided for this long, doubling with each
 * failure in a row up to the maximum. When every address is bad, the bad
 * ones are used anyway (at once): a fleet that is all bad is more likely a
 * slow server than a dead one.
 */
const BAD_COOLDOWN_BASE_MS = 2_000;
const BAD_COOLDOWN_MAX_MS = 60_000;
/** This many 5xx answers in a row (no success between) put an address on the bad list. */
const SERVER_ERROR_BURST = 5;

/**
 * What s3x knows about reaching an address: never tried, a connect in
 * flight, a connect succeeded (and none failed since), or the last connect
 * failed. Only "up" addresses are first choice.
 */
export type Reachability = "unknown" | "connecting" | "up" | "down";

export type AddressState = "healthy" | "bad" | "retired";

/** Counters per front-end address, reported with --json stats and --debug. */
export interface AddressStats {
  address: string;
  state: AddressState;
  requests: number;
  errors: number;
  /** Requests cancelled because they crawled or stalled, and sent elsewhere. */
  stragglers: number;
  bytesIn: number;
  bytesOut: number;
  /** Bytes per second in and out over the last two seconds. */
  rateBytesPerSec: number;
  inFlight: number;
  /** Why the address was last put on the bad list (or retired). */
  lastProblem?: string;
  /** Whether connects to it work: unknown, connecting, up or down. */
  reachability: Reachability;
  /** Hedged duplicates of slow tail requests sent to this address… */
  hedges: number;
  /** …and how many of them answered first. */
  hedgesWon: number;
}

/**
 * What s3x has seen of one front-end address: whether it is on the bad
 * list (and for how long), whether connects to it work, and what moved
 * through it. Its connections are FrontEndAddress's business.
 */
export class AddressHealth {
  inFlight = 0;
  badUntil = 0;
  retired = false;
  /** When address choice last picked it, for the round-robin among equals. */
  lastPickedAt = 0;
  /** When bytes last moved to or from this address, in observed time (see loop-lag.ts). */
  lastBytesAt = 0;
  private failuresInARow = 0;
  private serverErrorsInARow = 0;
  private lastProblem: string | undefined;
  private readonly meter = new RateMeter();
  readonly counters = { requests: 0, errors: 0, stragglers: 0, bytesIn: 0, bytesOut: 0, hedges: 0, hedgesWon: 0 };
  reachability: Reachability = "unknown";
  /** When the connect that made it "connecting" started. */
  connectingSince = 0;

  constructor(
    readonly address: string,
    private readonly connectTimes: ConnectTimes,
  ) {}

  protected markConnecting(at: number): void {
    this.reachability = "connecting";
    this.connectingSince = at;
  }

  protected noteConnect(startedAt: number, err: Error | null): void {
    if (!err) {
      this.connectTimes.add(Date.now() - startedAt);
      this.reachability = "up";
      return;
    }
    this.reachability = "down";
    const code = (err as NodeJS.ErrnoException).code;
    // The request that needed this connection reports the failure too; a
    // probe has no request, so it speaks for itself.
    if (this.isBad()) return;
    this.markBad(code === "UND_ERR_CONNECT_TIMEOUT" ? "connect timed out" : code === "ECONNREFUSED" ? "connection refused" : `connect failed (${code ?? err.message})`);
  }

  /**
   * Whether a connect has been under way longer than the happy-eyeballs
   * delay: the address is then passed over while others work.
   */
  isConnectLagging(now = Date.now()): boolean {
    return this.reachability === "connecting" && now - this.connectingSince > this.connectTimes.eyeballsDelay();
  }

  isBad(now = Date.now()): boolean {
    return this.badUntil > now;
  }

  /**
   * Back from the bad list but not yet proven: it gets one request at a
   * time until one succeeds. Without this, least-loaded picking would pour
   * a whole wave of requests onto an address the moment its cooldown ends.
   */
  isOnProbation(now = Date.now()): boolean {
    return this.failuresInARow > 0 && !this.isBad(now);
  }

  /** Whether it may take one more request now, bad-list and probation considered. */
  isReady(now = Date.now()): boolean {
    return !this.isBad(now) && !(this.isOnProbation(now) && this.inFlight > 0);
  }

  noteBytesIn(bytes: number): void {
    this.counters.bytesIn += bytes;
    this.noteBytes(bytes);
  }

  noteBytesOut(bytes: number): void {
    this.counters.bytesOut += bytes;
    this.noteBytes(bytes);
  }

  private noteBytes(bytes: number): void {
    const now = Date.now();
    this.meter.add(bytes, now);
    this.lastBytesAt = loopLag.observedNow(now);
  }

  /** Bytes per second in and out over the last two seconds. */
  currentRate(now = Date.now()): number {
    return this.meter.rate(now);
  }

  /** A complete answer that is not a server error: the address works. */
  noteSuccess(): void {
    this.failuresInARow = 0;
    this.serverErrorsInARow = 0;
    this.badUntil = 0;
  }

  /** A 5xx answer; a burst of them means this front end is in trouble. Returns true if it went bad. */
  noteServerError(status: number): boolean {
    this.serverErrorsInARow++;
    if (this.serverErrorsInARow < SERVER_ERROR_BURST) return false;
    this.serverErrorsInARow = 0;
    this.markBad(`${SERVER_ERROR_BURST} HTTP ${status} answers in a row`);
    return true;
  }

  /** Remembers what last went wrong here, for --json and --debug, without judging the address. */
  noteProblem(problem: string): void {
    this.lastProblem = problem;
  }

  markBad(problem: string): void {
    if (problem === "connect timed out" || problem === "connection refused") this.reachability = "down";
    this.failuresInARow++;
    this.lastProblem = problem;
    const cooldown = Math.min(BAD_COOLDOWN_MAX_MS, BAD_COOLDOWN_BASE_MS * 2 ** (this.failuresInARow - 1));
    this.badUntil = Date.now() + cooldown;
  }

  /** Gone from DNS: no new requests. */
  retire(): void {
    this.retired = true;
    this.lastProblem = "no longer in DNS";
  }

  state(now = Date.now()): AddressState {
    if (this.retired) return "retired";
    return this.isBad(now) ? "bad" : "healthy";
  }

  stats(now = Date.now()): AddressStats {
    const stats: AddressStats = {
      address: this.address,
      state: this.state(now),
      ...this.counters,
      rateBytesPerSec: Math.round(this.meter.rate(now)),
      inFlight: this.inFlight,
      reachability: this.reachability,
    };
    if (this.lastProblem) stats.lastProblem = this.lastProblem;
    return stats;
  }
}
