import type { AddressPool, HostPools } from "./pools.js";

/**
 * When a part request counts as a straggler. The defaults are loose on
 * purpose: a healthy transfer's requests differ by 2× at most (TCP flows
 * sharing a link are not perfectly fair), so nothing healthy is cancelled;
 * a front end that crawls at a tenth of its siblings' pace, or goes silent,
 * is caught within a second or two.
 */
export interface StragglerOptions {
  /** Requests whose payload (body sent or received) is smaller are never judged. */
  minPayloadBytes: number;
  /** A request's rate is judged only after it has moved payload for this long. */
  minAgeMs: number;
  /** Slower than the median of its siblings by this factor: a straggler. */
  slowRatio: number;
  /** No payload progress for this long, mid-body, while siblings progress: stalled. */
  stallMs: number;
  /** Before its first payload byte a request is stalled after this long… */
  firstByteFloorMs: number;
  /** …or after this multiple of its siblings' usual first-byte latency, whichever is longer. */
  firstByteFactor: number;
  /** How often in-flight requests are judged. */
  checkEveryMs: number;
}

export const DEFAULT_STRAGGLER_OPTIONS: StragglerOptions = {
  minPayloadBytes: 1024 * 1024,
  minAgeMs: 1_000,
  slowRatio: 6,
  stallMs: 2_000,
  firstByteFloorMs: 1_000,
  firstByteFactor: 5,
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

/** One request with a large payload, as the watch sees it. */
export class TrackedRequest {
  /** Payload bytes moved so far (body sent, then body received). */
  bytes = 0;
  /** When the first payload byte moved; undefined before. */
  firstByteAt: number | undefined;
  lastProgressAt: number;
  cancelled = false;
  /** (time, bytes) at each check, for the recent rate: an upload's first megabytes vanish into kernel buffers at once. */
  private readonly samples: { at: number; bytes: number }[] = [];

  constructor(
    readonly address: AddressPool,
    readonly startedAt: number,
    /** Payload bytes expected; a request that has moved them all is only waiting for the server. */
    readonly expectedBytes: number,
    readonly cancel: (err: Error) => void,
  ) {
    this.lastProgressAt = startedAt;
  }

  progress(bytes: number, now = Date.now()): void {
    this.firstByteAt ??= now;
    this.bytes += bytes;
    this.lastProgressAt = now;
  }

  sample(now: number, windowMs: number): void {
    this.samples.push({ at: now, bytes: this.bytes });
    while (this.samples.length > 2 && now - this.samples[1].at >= windowMs) this.samples.shift();
  }

  /** Bytes per ms over the last `windowMs` or more; undefined until that much history exists. */
  recentRate(now: number, windowMs: number): number | undefined {
    const oldest = this.samples[0];
    if (this.firstByteAt === undefined || !oldest || now - oldest.at < windowMs) return undefined;
    return (this.bytes - oldest.bytes) / (now - oldest.at);
  }
}

/**
 * Watches a host's large in-flight requests and cancels the ones that fall
 * far behind their siblings or stop moving, so the retry (which resumes a
 * GET from its last byte) goes to another address. A request is judged
 * only against evidence that the rest works: other requests moving bytes
 * or finishing after it went quiet, or a sibling rate to compare with.
 * When everything is slow the server is slow, and moving requests around
 * would not help.
 */
export class StragglerWatch {
  private readonly active = new Set<TrackedRequest>();
  private readonly firstByteLatencies: number[] = [];
  /** Payload rates (bytes/ms) of recently finished requests: the yardstick at the tail of a transfer. */
  private readonly finishedRates: number[] = [];
  private lastFinishAt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: HostPools,
    private readonly options: StragglerOptions,
  ) {}

  /** Starts watching a request with `expectedBytes` of payload; small requests are not watched. */
  track(address: AddressPool, expectedBytes: number, cancel: (err: Error) => void): TrackedRequest | undefined {
    if (expectedBytes < this.options.minPayloadBytes) return undefined;
    const request = new TrackedRequest(address, Date.now(), expectedBytes, cancel);
    this.active.add(request);
    if (!this.timer) {
      this.timer = setInterval(() => this.check(), this.options.checkEveryMs);
      this.timer.unref();
    }
    return request;
  }

  /** Stops watching; `succeeded` requests teach the watch what normal looks like. */
  untrack(request: TrackedRequest | undefined, succeeded: boolean): void {
    if (!request || !this.active.delete(request)) return;
    if (succeeded && request.firstByteAt !== undefined) {
      const now = Date.now();
      remember(this.firstByteLatencies, request.firstByteAt - request.startedAt);
      remember(this.finishedRates, request.bytes / Math.max(1, now - request.startedAt));
      this.lastFinishAt = now;
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

  /** Judges every watched request once; exposed for tests. */
  check(now = Date.now()): void {
    const o = this.options;
    const requests = [...this.active].filter((r) => !r.cancelled);
    for (const r of requests) r.sample(now, o.minAgeMs);
    const firstByteLimit = Math.max(o.firstByteFloorMs, o.firstByteFactor * percentile(this.firstByteLatencies, 0.9));
    for (const request of requests) {
      const others = requests.filter((r) => r !== request);
      // The newest sign of life from anything else: bytes moving, or a request finishing.
      const lastSignOfLife = Math.max(this.lastFinishAt, ...others.filter((r) => r.firstByteAt !== undefined).map((r) => r.lastProgressAt));
      const silentFor = now - request.lastProgressAt;
      const othersMovedSince = lastSignOfLife > request.lastProgressAt && now - lastSignOfLife < o.stallMs;
      if (request.firstByteAt === undefined) {
        if (othersMovedSince && silentFor >= firstByteLimit) this.cancel(request, `sent no data for ${seconds(silentFor)} s`);
        continue;
      }
      if (request.bytes >= request.expectedBytes) {
        // Everything is sent (an upload's body may sit in kernel buffers) and
        // the answer is overdue by far more than sending took.
        const sendingTook = request.lastProgressAt - request.startedAt;
        if (othersMovedSince && silentFor >= Math.max(2 * o.stallMs, 3 * sendingTook)) this.cancel(request, `got no answer for ${seconds(silentFor)} s after sending`);
        continue;
      }
      if (othersMovedSince && silentFor >= o.stallMs) {
        this.cancel(request, `stalled for ${seconds(silentFor)} s`);
        continue;
      }
      const rate = request.recentRate(now, o.minAgeMs);
      if (rate === undefined || !this.host.hasAlternative(request.address)) continue;
      const yardstick = [...others.flatMap((r) => r.recentRate(now, o.minAgeMs) ?? []), ...this.finishedRates.slice(-16)];
      if (yardstick.length < 3) continue;
      const median = percentile(yardstick, 0.5);
      if (rate * o.slowRatio >= median) continue;
      // Worth it only if finishing here would take clearly longer than starting over elsewhere.
      const remaining = request.expectedBytes - request.bytes;
      if (remaining / Math.max(rate, 1e-9) - remaining / median < o.minAgeMs) continue;
      this.cancel(request, `ran at ${mbps(rate)} MB/s while its siblings ran at ${mbps(median)} MB/s`, this.addressIsSlow(request.address));
    }
  }

  /**
   * One slow request may be bad luck (TCP flows sharing a link are not
   * fair); the address as a whole moving at under half the pace of the
   * others is a slow front end, worth avoiding for a while.
   */
  private addressIsSlow(address: AddressPool): boolean {
    const now = Date.now();
    const others = this.host.addresses.filter((a) => a !== address && !a.retired && !a.isBad(now)).map((a) => a.currentRate(now));
    if (others.length === 0) return false;
    return address.currentRate(now) * 2 < percentile(others, 0.5);
  }

  private cancel(request: TrackedRequest, reason: string, markBad = true): void {
    request.cancelled = true;
    request.address.counters.stragglers++;
    request.address.noteProblem(`straggler: ${reason}`);
    if (markBad) this.host.markBad(request.address, reason);
    request.cancel(new StragglerError(request.address.address, reason));
  }
}

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
