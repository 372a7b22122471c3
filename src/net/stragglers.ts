// The straggler watch: cancels large requests that crawl or stall on one address, so their retry goes elsewhere.
import { loopLag, type LagSource } from "./loop-lag.js";
import { TrackedRequest, type RequestJudge, type WatchedAddress } from "./tracked-request.js";

export { TrackedRequest, type WatchedAddress };

/** The addresses of one host, as the watch sees them (net/pools/host-addresses.ts). */
export interface AddressBook {
  readonly addresses: readonly WatchedAddress[];
  /** Whether a request on `address` could go somewhere healthy instead. */
  hasAlternative(address: WatchedAddress): boolean;
  /** Puts `address` on the bad list for a while, saying why. */
  markBad(address: WatchedAddress, problem: string): void;
}

/**
 * When a part request counts as a straggler. Cancelling a request throws
 * away its bytes and pays a new request, so the rules ask for evidence
 * that the address is at fault, not the machine or the server:
 *
 *  - time is "observed time" (wall time minus event-loop lag, see
 *    loop-lag.ts): a loaded machine that could not read its sockets does
 *    not make a request look silent or slow;
 *  - bytes that arrived but were not yet read count as progress. Node
 *    does not show a socket's kernel receive queue, so the watch makes sure
 *    there is none left to read, or that the time is left out: it judges
 *    after the loop's poll phase (setImmediate), never between a stall's
 *    end and the reads it delayed; time in which s3x's own consumer held a
 *    response's reads (TrackedRequest.holdReads) is neither silence nor
 *    part of a rate, and a held request is not judged;
 *  - a rate is taken over at least `minAgeMs` of readable time (observed,
 *    reads not held); when the loop lagged for longer than that within the
 *    window, or for half the addresses' 2 s meter window, the verdict waits:
 *    what such figures measure is this process, not the address;
 *  - a rate is judged over a window of seconds, against the median of at
 *    least `minSamples` siblings (requests in flight and recently finished
 *    on the same host), and only when the request's address as a whole
 *    moves at under half the pace of the other addresses: one unlucky TCP
 *    flow on a healthy address is left alone (the tail's hedged duplicates
 *    deal with those, see engine/hedge.ts);
 *  - a silence (no first byte, or no progress mid-body) counts as the
 *    address's fault when the whole address has gone quiet too, or when it
 *    lasts several times longer than the limit.
 *
 * A front end that crawls at a tenth of its siblings' pace, or goes
 * silent, is still caught within two or three seconds.
 */
export interface StragglerOptions {
  /** Requests whose payload (body sent or received) is smaller are never judged. */
  minPayloadBytes: number;
  /** A request's rate is judged over this much observed time, at least. */
  minAgeMs: number;
  /** Slower than the median of its siblings by this factor (and on a slow address): a straggler. */
  slowRatio: number;
  /** Rates are compared only once this many siblings' rates are known. */
  minSamples: number;
  /** No payload progress for this long, mid-body, while siblings progress: stalled. */
  stallMs: number;
  /** Before its first payload byte a request is stalled after this long… */
  firstByteFloorMs: number;
  /** …or after this multiple of its siblings' usual first-byte latency, whichever is longer. */
  firstByteFactor: number;
  /** A silence on an address that still moves other requests' bytes must last this many times the limit. */
  busyAddressFactor: number;
  /** How often in-flight requests are judged. */
  checkEveryMs: number;
}

export const DEFAULT_STRAGGLER_OPTIONS: StragglerOptions = {
  minPayloadBytes: 1024 * 1024,
  minAgeMs: 2_000,
  slowRatio: 6,
  minSamples: 4,
  stallMs: 2_000,
  firstByteFloorMs: 1_000,
  firstByteFactor: 5,
  busyAddressFactor: 3,
  checkEveryMs: 250,
};

/** The request was cancelled because it crawled or stalled; the retry goes elsewhere. */
export class StragglerError extends Error {
  readonly code = "S3X_STRAGGLER";
  constructor(
    readonly address: string,
    reason: string,
  ) {
    super(`request to ${address} ${reason}; moved to another address`);
  }
}

/**
 * Watches a host's large in-flight requests and cancels the ones that fall
 * far behind their siblings or stop moving, so the retry (which resumes a
 * GET from its last byte) goes to another address. A request is judged
 * only against evidence that the rest works: other requests moving bytes
 * or finishing after it went quiet, or a sibling rate to compare with.
 * When everything is slow the server is slow (or this machine is), and
 * moving requests around would not help.
 */
export class StragglerWatch implements RequestJudge {
  private readonly active = new Set<TrackedRequest>();
  private readonly firstByteLatencies: number[] = [];
  /** Payload rates (bytes/ms) of recently finished requests: the yardstick at the tail of a transfer. */
  private readonly finishedRates: number[] = [];
  private lastFinishAt = 0;
  /** (wall, lag so far) at each check, back over the address meters' window: how much of it the loop lagged. */
  private readonly lagHistory: { wall: number; lag: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: AddressBook,
    private readonly options: StragglerOptions,
    private readonly clock: LagSource = loopLag,
  ) {}

  /** Starts watching a request with `expectedBytes` of payload; small requests are not watched. */
  track(address: WatchedAddress, expectedBytes: number, cancel: (err: Error) => void): TrackedRequest | undefined {
    if (expectedBytes < this.options.minPayloadBytes) return undefined;
    const request = new TrackedRequest(address, this.clock.observedNow(), expectedBytes, cancel, this.clock, this);
    this.active.add(request);
    if (!this.timer) {
      this.clock.update();
      // Judged after the loop's next poll phase, not in the timer phase:
      // after a stall, timers run before the sockets are read, so bytes that
      // arrived during the stall would not have been seen yet.
      this.timer = setInterval(() => {
        setImmediate(() => {
          if (!this.timer) return;
          this.clock.update();
          this.check();
        });
      }, this.options.checkEveryMs);
      this.timer.unref();
    }
    return request;
  }

  /** Stops watching; `succeeded` requests teach the watch what normal looks like. */
  untrack(request: TrackedRequest | undefined, succeeded: boolean): void {
    if (!request || !this.active.delete(request)) return;
    if (succeeded && request.firstByteAt !== undefined) {
      remember(this.firstByteLatencies, request.firstByteAt - request.startedAt);
      remember(this.finishedRates, request.bytes / Math.max(1, this.clock.wallNow() - request.startedWallAt));
      this.lastFinishAt = this.clock.observedNow();
    }
    if (this.active.size === 0) this.stopTimer();
  }

  close(): void {
    this.stopTimer();
    this.active.clear();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Before its first byte, a request may wait this long (observed ms) on an address that is otherwise quiet. */
  private firstByteLimit(): number {
    const o = this.options;
    // Until a few requests have finished, nothing says what "usual" is here:
    // a busy server's first bytes can take seconds, so be twice as patient.
    const floor = this.firstByteLatencies.length >= o.minSamples ? o.firstByteFloorMs : 2 * o.firstByteFloorMs;
    return Math.max(floor, o.firstByteFactor * percentile(this.firstByteLatencies, 0.9));
  }

  /** Judges every watched request once (`now` in observed time); exposed for tests. */
  check(at?: number): void {
    const o = this.options;
    // Silences in observed time, rates in wall time (tests pass one simulated time for both).
    const now = at ?? this.clock.observedNow();
    const wall = at ?? this.clock.wallNow();
    this.noteLag(wall, wall - now);
    // A request whose reads s3x's own consumer holds is waiting on this
    // process, not on the network: neither judged nor a yardstick.
    const requests = [...this.active].filter((r) => !r.cancelled && !r.readsHeld);
    for (const r of requests) r.sample(wall, now, o.minAgeMs);
    const firstByteLimit = this.firstByteLimit();
    for (const request of requests) {
      const others = requests.filter((r) => r !== request);
      // The newest sign of life from anything else: bytes moving, or a request finishing.
      const lastSignOfLife = Math.max(this.lastFinishAt, ...others.filter((r) => r.firstByteAt !== undefined).map((r) => r.lastProgressAt));
      const silentFor = now - request.lastProgressAt;
      const othersMovedSince = lastSignOfLife > request.lastProgressAt && now - lastSignOfLife < o.stallMs;
      // How long the request's whole address has moved nothing (observed ms).
      const addressSilentFor = now - Math.max(request.address.lastBytesAt, request.startedAt);
      // A silence is judged only while others move, and blamed on the address
      // only if the whole address went quiet too, or it lasts far longer.
      const silenceIsTheAddress = (limit: number): boolean =>
        othersMovedSince && silentFor >= limit && (addressSilentFor >= limit || silentFor >= o.busyAddressFactor * limit);
      if (request.firstByteAt === undefined) {
        if (silenceIsTheAddress(firstByteLimit)) this.cancel(request, `sent no data for ${seconds(silentFor)} s`);
        continue;
      }
      if (request.bytes >= request.expectedBytes) {
        // Everything is sent (an upload's body may sit in kernel buffers) and
        // the answer is overdue by far more than sending took.
        const sendingTook = request.lastProgressAt - request.startedAt;
        if (silenceIsTheAddress(Math.max(2 * o.stallMs, 3 * sendingTook))) this.cancel(request, `got no answer for ${seconds(silentFor)} s after sending`);
        continue;
      }
      if (silenceIsTheAddress(o.stallMs)) {
        this.cancel(request, `stalled for ${seconds(silentFor)} s`);
        continue;
      }
      const rate = request.rateOrUndefined(wall, now, o.minAgeMs);
      if (rate === undefined || !this.host.hasAlternative(request.address)) continue;
      const yardstick = [...others.flatMap((r) => r.rateOrUndefined(wall, now, o.minAgeMs) ?? []), ...this.finishedRates.slice(-16)];
      if (yardstick.length < o.minSamples) continue;
      const median = percentile(yardstick, 0.5);
      if (rate * o.slowRatio >= median) continue;
      // Worth it only if finishing here would take clearly longer than starting over elsewhere.
      const remaining = request.expectedBytes - request.bytes;
      if (remaining / Math.max(rate, 1e-9) - remaining / median < o.minAgeMs) continue;
      // One slow flow on an address that keeps pace is bad luck (TCP flows
      // sharing a link are not fair), not worth a re-send.
      if (!this.addressIsSlow(request.address, wall)) continue;
      this.cancel(request, `ran at ${mbps(rate)} MB/s while its siblings ran at ${mbps(median)} MB/s`);
    }
  }

  /**
   * Whether `request` is worth a hedged duplicate on another address: a
   * fresh request there (usual first-byte latency, then the siblings'
   * median rate) would finish well before this one, going by its own
   * recent rate, or its silence so far. Used at a transfer's tail, where a
   * duplicate costs little and waiting on the slowest request costs the
   * whole transfer (engine/hedge.ts decides when it is the tail).
   */
  hedgeWorthy(request: TrackedRequest, at?: number): boolean {
    const o = this.options;
    if (request.cancelled || !this.host.hasAlternative(request.address)) return false;
    const now = at ?? this.clock.observedNow();
    const wall = at ?? this.clock.wallNow();
    const yardstick = [...this.finishedRates.slice(-16), ...[...this.active].flatMap((r) => (r === request ? [] : (r.rateOrUndefined(wall, now, o.minAgeMs) ?? [])))];
    if (yardstick.length < o.minSamples) return false;
    const median = percentile(yardstick, 0.5);
    const usualFirstByte = percentile(this.firstByteLatencies, 0.5);
    const remaining = Math.max(0, request.expectedBytes - request.bytes);
    const fresh = usualFirstByte + request.expectedBytes / Math.max(median, 1e-9);
    // Whatever its state, a request that has already taken twice what a whole
    // fresh one takes (plus a margin) is overdue: the classic hedging rule.
    if (now - request.startedAt > 2 * fresh + 500) return true;
    let expectedLeft: number;
    if (request.firstByteAt === undefined) {
      const waited = now - request.startedAt;
      // No data yet: overdue once it has waited far longer than first bytes usually take.
      if (waited < Math.max(o.firstByteFloorMs / 2, 3 * percentile(this.firstByteLatencies, 0.9))) return false;
      expectedLeft = Infinity;
    } else if (remaining === 0) {
      // An upload whose body is all handed to the kernel, waiting for its
      // answer (part of the body may still sit in the socket's buffer): once
      // it has waited longer than a whole fresh request takes elsewhere, a
      // duplicate is the faster way.
      const waiting = now - request.lastProgressAt;
      return waiting > fresh + 500;
    } else {
      const rate = request.rateOrUndefined(wall, now, o.minAgeMs / 2);
      if (rate === undefined) return false;
      expectedLeft = remaining / Math.max(rate, 1e-9);
    }
    // A clear margin: twice as long, and at least half a second more.
    return expectedLeft > 2 * fresh && expectedLeft - fresh > 500;
  }

  judgeHedgeLoser(request: TrackedRequest): void {
    if (!request.address.isBad() && this.host.hasAlternative(request.address)) {
      this.host.markBad(request.address, "a hedged duplicate on another address finished first");
    }
  }

  /**
   * One slow request may be bad luck; the address as a whole moving at
   * under half the pace of the others is a slow front end, worth avoiding
   * for a while.
   */
  private addressIsSlow(address: WatchedAddress, wall: number): boolean {
    // The meters cover the last ADDRESS_METER_MS of wall time. If the loop
    // lagged for half of that, they hold too little readable time: which
    // address's sockets happened to be read first after the stall decides
    // their figures, so no address is judged slow on them.
    if (this.lagWithin(wall, ADDRESS_METER_MS) > ADDRESS_METER_MS / 2) return false;
    // The addresses' rate meters count in real wall time (net/pools/address-health.ts), whatever the watch's clock.
    const now = Date.now();
    const others = this.host.addresses.filter((a) => a !== address && !a.retired && !a.isBad(now)).map((a) => a.currentRate(now));
    if (others.length === 0) return false;
    return address.currentRate(now) * 2 < percentile(others, 0.5);
  }

  private noteLag(wall: number, lag: number): void {
    this.lagHistory.push({ wall, lag });
    while (this.lagHistory.length > 2 && wall - this.lagHistory[1].wall >= ADDRESS_METER_MS) this.lagHistory.shift();
  }

  /**
   * Event-loop lag (ms) since the newest check at least `spanMs` of wall
   * time ago (or the oldest kept): a stall that began just before the span
   * counts whole.
   */
  private lagWithin(wall: number, spanMs: number): number {
    const newest = this.lagHistory[this.lagHistory.length - 1];
    if (!newest) return 0;
    let from = this.lagHistory[0];
    for (const h of this.lagHistory) if (wall - h.wall >= spanMs) from = h;
    return newest.lag - from.lag;
  }

  private cancel(request: TrackedRequest, reason: string): void {
    request.cancelled = true;
    request.address.counters.stragglers++;
    request.address.noteProblem(`straggler: ${reason}`);
    this.host.markBad(request.address, reason);
    request.cancel(new StragglerError(request.address.address, reason));
  }
}

/** The window of the addresses' rate meters (net/rate-meter.ts, the default of AddressHealth's). */
const ADDRESS_METER_MS = 2_000;

function remember(ring: number[], value: number): void {
  ring.push(value);
  if (ring.length > 64) ring.shift();
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

/** Bytes per millisecond → MB/s, for messages. */
function mbps(bytesPerMs: number): string {
  return (bytesPerMs / 1000).toFixed(1);
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}
