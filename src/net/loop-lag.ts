import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";

/**
 * Time this process could not observe its sockets: event-loop lag.
 *
 * On a loaded machine (two shared cores, the S3 server on them too) the
 * event loop regularly stalls for hundreds of milliseconds: garbage
 * collection, a burst of other work, the process descheduled. Bytes keep
 * arriving in kernel buffers meanwhile, but no JavaScript sees them, so a
 * request looks silent and its rate looks low. Judging the network by wall
 * time would then blame an address for our own lag, cancel healthy
 * requests and re-send them: pure waste.
 *
 * This clock counts the lag (the sum of every event-loop delay beyond the
 * monitor's resolution, from perf_hooks.monitorEventLoopDelay, or the
 * lateness of the caller's own periodic check if that is larger) and
 * offers "observed time": wall time minus the lag so far. Silences and
 * rates measured in observed time are the network's, not the event loop's.
 */
export interface LagSource {
  /** Milliseconds of event-loop lag accumulated since watching began. */
  readonly lagMs: number;
  /** Wall time minus accumulated lag, in ms. */
  observedNow(): number;
  /** Wall time in ms (Date.now here; a test's clock drives both). */
  wallNow(): number;
  /** Takes in the lag measured since the last call. */
  update(): void;
}

const RESOLUTION_MS = 20;

export class EventLoopLagClock implements LagSource {
  lagMs = 0;
  private histogram: IntervalHistogram | undefined;
  /** Running totals already accounted (never reset: a reset loses the sample in progress). */
  private seenSumNs = 0;
  private seenCount = 0;

  observedNow(now = Date.now()): number {
    return now - this.lagMs;
  }

  wallNow(): number {
    return Date.now();
  }

  update(): void {
    if (!this.histogram) {
      // Its timer is unref'd: watching never keeps the process alive.
      this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
      this.histogram.enable();
      return;
    }
    const h = this.histogram;
    const sumNs = h.mean * h.count;
    const samples = h.count - this.seenCount;
    if (samples <= 0) return;
    // Each sample is one timer interval (resolution + delay).
    const lag = (sumNs - this.seenSumNs) / 1e6 - samples * RESOLUTION_MS;
    this.seenSumNs = sumNs;
    this.seenCount = h.count;
    if (lag > 0) this.lagMs += lag;
  }
}

/** One clock per process: the event loop is shared by every host and request. */
export const loopLag = new EventLoopLagClock();
