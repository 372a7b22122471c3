import { Readable } from "node:stream";
import type { Dispatcher } from "undici";

/**
 * The body of an HTTP response as the AWS SDK sees it: a Readable, so every
 * SDK code path (error parsing, `transformToString`, piping) works unchanged.
 *
 * It also has a fast path for the transfer engine, `readInto`: the bytes of
 * the socket are copied straight into a caller's part buffer, with no stream
 * machinery per chunk. Measured on our machines this roughly halves the client
 * CPU of a large download compared with consuming the Readable.
 */
export class ResponseBody extends Readable {
  private controller: Dispatcher.DispatchController | undefined;
  private sink: Sink | undefined;
  private ended = false;
  private failure: Error | undefined;

  constructor() {
    // A modest high-water mark: the stream path only serves small bodies
    // (XML, errors) and callers that insist on a stream.
    super({ highWaterMark: 256 * 1024 });
  }

  /** Called by the HTTP handler once the request is on a socket. */
  attach(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  /** Called by the HTTP handler for every chunk the socket delivers. */
  deliver(chunk: Buffer): void {
    const sink = this.sink;
    if (sink) {
      sink.accept(chunk);
      return;
    }
    if (!this.push(chunk)) this.controller?.pause();
  }

  /** Called by the HTTP handler at the end of the body. */
  finish(): void {
    this.ended = true;
    if (this.sink) this.sink.finish();
    else this.push(null);
  }

  /** Called by the HTTP handler when the response fails mid-body. */
  fail(err: Error): void {
    this.failure = err;
    if (this.sink) this.sink.fail(err);
    else this.destroy(err);
  }

  override _read(): void {
    this.controller?.resume();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // A consumer that gives up on the body must free the connection.
    if (!this.ended && this.controller && !this.controller.aborted) {
      this.controller.abort(err ?? new Error("response body discarded"));
    }
    callback(err);
  }

  /**
   * Copies the rest of the body into `target` starting at `offset`, calling
   * `onBytes` as bytes land (for progress). Resolves with the number of bytes
   * copied when the body ends; rejects if the body fails or would overflow.
   * The caller learns how many bytes arrived before a failure through
   * `onBytes`, so a retry can ask only for the missing range.
   */
  readInto(target: Buffer, offset: number, onBytes?: (n: number) => void): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const sink = new Sink(target, offset, onBytes, resolve, reject, () => this.controller?.abort(new Error("overflow")));
      // Whatever the stream already buffered goes first, in order.
      let chunk: Buffer | null;
      while ((chunk = this.read() as Buffer | null) !== null) {
        if (!sink.accept(chunk)) return;
      }
      if (this.failure) return sink.fail(this.failure);
      if (this.ended) return sink.finish();
      this.sink = sink;
      this.controller?.resume();
    });
  }
}

/** Receives body bytes into a fixed buffer region. */
class Sink {
  private position: number;
  private settled = false;

  constructor(
    private readonly target: Buffer,
    private readonly start: number,
    private readonly onBytes: ((n: number) => void) | undefined,
    private readonly resolve: (n: number) => void,
    private readonly reject: (err: Error) => void,
    private readonly abort: () => void,
  ) {
    this.position = start;
  }

  accept(chunk: Buffer): boolean {
    if (this.settled) return false;
    if (this.position + chunk.length > this.target.length) {
      this.abort();
      this.fail(new BodyOverflowError(this.target.length - this.start, this.position - this.start + chunk.length));
      return false;
    }
    chunk.copy(this.target, this.position);
    this.position += chunk.length;
    this.onBytes?.(chunk.length);
    return true;
  }

  finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(this.position - this.start);
  }

  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }
}

/** The server sent more bytes than the requested range holds. */
export class BodyOverflowError extends Error {
  readonly code = "S3X_BODY_OVERFLOW";
  constructor(expected: number, got: number) {
    super(`response body longer than expected (${expected} bytes, got at least ${got})`);
  }
}
