import type { FrontEndAddress, HostAddresses } from "./pools.js";
import { StragglerError, type TrackedRequest } from "./stragglers.js";
import type { AttemptRouting } from "./routing.js";
import { ADDRESS_FAILURE_CODES, abortReason, describeCode } from "./failures.js";
import { watchAbort } from "./abort-watch.js";
import { sentInSlices } from "./upload-slices.js";

/**
 * What one request does to its address's books: in-flight and request
 * counters, byte rates, the straggler watch, server errors, health marks on
 * failure, and cancellation by the caller's signal. The transport (net/http1)
 * reports events; the rules live here.
 */
export class RequestAccounting {
  /** The straggler watch's handle on this request (undefined when not watched). */
  readonly tracked: TrackedRequest | undefined;
  private answered = false;
  private serverError = false;
  private done = false;
  private unwatchAbort: (() => void) | undefined;

  /**
   * Counts the request as started. `abort` cancels it on the transport (for
   * the straggler watch and the caller's signal); a body of `sendingBytes`
   * sent in slices is counted as each goes out (`sent`), a smaller one now.
   */
  constructor(
    readonly address: FrontEndAddress,
    private readonly host: HostAddresses,
    private readonly sendingBytes: number,
    expectedBytes: number,
    private readonly signal: AbortSignal | undefined,
    routing: AttemptRouting | undefined,
    abort: (reason: Error) => void,
  ) {
    address.inFlight++;
    address.counters.requests++;
    if (!sentInSlices(sendingBytes)) address.noteBytesOut(sendingBytes);
    this.tracked = host.stragglers.track(address, expectedBytes, abort);
    // The retry loop follows a large request's progress to decide on a hedged duplicate (engine/hedge.ts).
    if (routing) routing.tracked = this.tracked;
    if (signal) this.unwatchAbort = watchAbort(signal, () => abort(abortReason(signal)));
  }

  /** Whether the request has ended (succeeded, failed or been cancelled): later events change nothing. */
  get settled(): boolean {
    return this.done;
  }

  /** A slice of a large request body went out: the address's rate and the straggler watch see it. */
  sent(n: number): void {
    this.address.noteBytesOut(n);
    this.tracked?.progress(n);
  }

  /** Response bytes arrived; only a download's body counts as progress (an upload's answer is a few hundred bytes). */
  received(n: number): void {
    this.address.noteBytesIn(n);
    if (this.answered && this.sendingBytes === 0) this.tracked?.progress(n);
  }

  /** s3x's consumer stopped (`held`) or restarted reading the response: that wait is not the network's (net/stragglers.ts). */
  holdReads(held: boolean): void {
    if (!this.done) this.tracked?.holdReads(held);
  }

  /** The response head is in. */
  answer(status: number): void {
    this.answered = true;
    if (status >= 500) {
      this.serverError = true;
      this.host.noteServerError(this.address, status);
    }
  }

  /**
   * The response body ended: a success for the address unless the server
   * answered 5xx. The straggler watch counts it as a success only when the
   * body was `delimited` (not merely cut off by the server's close).
   */
  complete(delimited = true): void {
    if (this.done) return;
    this.settle(delimited && !this.serverError);
    if (!this.serverError) this.address.noteSuccess();
  }

  /**
   * The request failed: counted against the address unless the caller
   * cancelled it, and the address marked bad when the failure is its fault.
   * The error learns which address it came from.
   */
  fail(err: Error): void {
    if (this.done) return;
    this.settle(false);
    const code = (err as NodeJS.ErrnoException).code;
    if (!this.cancelledByCaller(err)) this.address.counters.errors++;
    if (code && ADDRESS_FAILURE_CODES.has(code)) this.host.markBad(this.address, describeCode(code));
    if (!(err instanceof StragglerError)) (err as Error & { address?: string }).address ??= this.address.address;
  }

  /** Cancelled before any answer, while the transport may still be connecting or sending. */
  cancel(reason: Error): void {
    if (this.done) return;
    this.settle(false);
    if (!this.cancelledByCaller(reason)) this.address.counters.errors++;
  }

  /** A cancellation by the caller says nothing about the address. */
  private cancelledByCaller(err: Error): boolean {
    return this.signal?.aborted === true && err === this.signal.reason;
  }

  private settle(succeeded: boolean): void {
    this.done = true;
    this.address.inFlight--;
    this.host.stragglers.untrack(this.tracked, succeeded);
    this.unwatchAbort?.();
  }
}
