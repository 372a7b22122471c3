import { Readable } from "node:stream";

/**
 * Whatever produces a response's bytes: s3x's HTTP/1.1 connection
 * (net/http1). Pausing must stop reads from the socket, so a slow consumer
 * pushes back on the server.
 */
export interface BodySource {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
  readonly aborted?: boolean;
}

/**
 * The body of an HTTP response: a Readable, for small bodies (XML answers,
 * errors) read whole by s3/request.ts.
 *
 * It also has a fast path for the transfer engine, `readInto`: the bytes of
 * the socket are copied straight into a caller's part buffer, with no stream
 * machinery per chunk. Measured on our machines this roughly halves the client
 * CPU of a large download compared with consuming the Readable. A source that
 * owns its socket can go one step further and have the kernel read straight
 * into the part buffer (`directSink`), with no copy at all.
 */
export class ResponseBody extends Readable {
  private source: BodySource | undefined;
  private sink: Sink | undefined;
  private ended = false;
  private failure: Error | undefined;
  /** readInto is taking what the stream buffered: no pulling from the source meanwhile. */
  private draining = false;

  constructor() {
    // A modest high-water mark: the stream path only serves small bodies
    // (XML, errors) and callers that insist on a stream.
    super({ highWaterMark: 256 * 1024 });
    // A body nobody reads any more that fails (its connection closed at the
    // end of a command) must not end the process with an "unhandled 'error'"
    // stack trace. Readers still get the error: readInto through `failure`,
    // stream consumers through their own listeners or iterators.
    this.on("error", () => undefined);
  }

  /** Called by the HTTP handler once the request is on a socket. */
  attach(source: BodySource): void {
    this.source = source;
  }

  /** Called by the HTTP handler for every chunk the socket delivers. */
  deliver(chunk: Buffer): void {
    const sink = this.sink;
    if (sink) {
      const taken = sink.acceptAll(chunk);
      if (taken === chunk.length || !sink.slice) return;
      // A slice filled up mid-chunk: the rest waits in the stream for the
      // next slice (copied: a source may hand over its own read buffer).
      chunk = Buffer.from(chunk.subarray(taken));
    }
    if (!this.push(chunk)) this.source?.pause();
  }

  /**
   * The part buffer a `readInto` caller is waiting to fill, for a source
   * that can place socket reads there itself (then it reports them with
   * `DirectSink.advance`). Undefined while no such caller waits.
   */
  directSink(): DirectSink | undefined {
    const sink = this.sink;
    return sink && !sink.settled ? sink : undefined;
  }

  /** Whether a consumer is taking the body (a sink or the stream); a source without one waits. */
  get hasSink(): boolean {
    return this.sink !== undefined;
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
    if (!this.draining) this.source?.resume();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // A consumer that gives up on the body must free the connection.
    if (!this.ended && this.source && !this.source.aborted) {
      this.source.abort(err ?? new Error("response body discarded"));
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
    return this.attachSink(target, offset, onBytes, false);
  }

  /**
   * Like readInto, but for a body read in slices: resolves as soon as
   * `target` is full, or at the end of the body (then with fewer bytes than
   * the room left, possibly none). The source is paused until the next
   * call; bytes it had already read wait in the stream and go first into
   * the next slice.
   *
   * `refill`, called when `target` is full, may hand over the next slice at
   * once (see NextSlice): reading then goes on into it with no pause, and
   * the promise resolves with the bytes of every slice filled.
   */
  readSlice(target: Buffer, offset: number, onBytes?: (n: number) => void, refill?: (taken: number) => NextSlice | undefined): Promise<number> {
    return this.attachSink(target, offset, onBytes, true, refill);
  }

  private attachSink(
    target: Buffer,
    offset: number,
    onBytes: ((n: number) => void) | undefined,
    slice: boolean,
    refill?: (taken: number) => NextSlice | undefined,
  ): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const detach = (): void => {
        if (this.sink !== sink) return;
        this.sink = undefined;
        // Until the next slice: the bytes wait in the kernel's socket buffer, not copied into the stream.
        if (!this.ended) this.source?.pause();
      };
      const sink = new Sink(target, offset, onBytes, resolve, reject, () => this.source?.abort(new Error("overflow")), slice ? detach : undefined, refill);
      if (slice && sink.room === 0) return sink.finish();
      // Whatever the stream already buffered goes first, in order. Reading
      // it must not pull more from the source (_read): those bytes would be
      // copied into the stream only to be copied again here.
      if (this.readableLength > 0) {
        this.draining = true;
        try {
          let chunk: Buffer | null;
          while ((chunk = this.read() as Buffer | null) !== null) {
            const taken = sink.acceptAll(chunk);
            if (!sink.settled) continue;
            if (taken < chunk.length && slice) this.unshift(chunk.subarray(taken));
            return;
          }
        } finally {
          this.draining = false;
        }
      }
      if (this.failure) return sink.fail(this.failure);
      if (this.ended) return sink.finish();
      this.sink = sink;
      this.source?.resume();
    });
  }
}

/**
 * The slice a full one is followed by with no pause: its buffer (filled
 * from its start), and whether it takes the rest of the body (then the read
 * ends with the body, as readInto's, not when the buffer is full).
 */
export interface NextSlice {
  buffer: Buffer;
  last: boolean;
}

/** A part buffer that a source may fill in place. */
export interface DirectSink {
  /** Room left in the target, in bytes. */
  readonly room: number;
  /** A slice of the body: it may end before the body does (then the source reads on into its own buffer). */
  readonly slice: boolean;
  /** The next `length` bytes of the target (length ≤ room), for the socket to read into. */
  window(length: number): Buffer;
  /** `n` bytes were placed at the start of the last window. */
  advance(n: number): void;
}

/**
 * Receives body bytes into a fixed buffer region. A slice sink (`detach`
 * given) takes what fits, then goes on into the next slice if `refill` has
 * one ready, else settles and detaches from the body; a plain one fails the
 * body when more arrives than fits.
 */
class Sink implements DirectSink {
  private position: number;
  /** Bytes taken into every slice so far (what the read resolves with). */
  private taken = 0;
  settled = false;

  constructor(
    private target: Buffer,
    start: number,
    private readonly onBytes: ((n: number) => void) | undefined,
    private readonly resolve: (n: number) => void,
    private readonly reject: (err: Error) => void,
    private readonly abort: () => void,
    private detach?: () => void,
    private readonly refill?: (taken: number) => NextSlice | undefined,
  ) {
    this.position = start;
  }

  /** Whether this sink takes one slice of a longer body. */
  get slice(): boolean {
    return this.detach !== undefined;
  }

  get room(): number {
    return this.target.length - this.position;
  }

  window(length: number): Buffer {
    return this.target.subarray(this.position, this.position + length);
  }

  advance(n: number): void {
    this.position += n;
    this.taken += n;
    this.onBytes?.(n);
    if (!this.detach || this.position < this.target.length) return;
    const next = this.refill?.(this.taken);
    if (!next) return this.finish();
    this.target = next.buffer;
    this.position = 0;
    // The last slice reads to the end of the body, not just to the end of its buffer.
    if (next.last) this.detach = undefined;
  }

  /** Copies in what it can of `chunk`, across slices that follow at once; returns the bytes taken. */
  acceptAll(chunk: Buffer): number {
    let offset = 0;
    while (offset < chunk.length && !this.settled) offset += this.accept(offset === 0 ? chunk : chunk.subarray(offset));
    return offset;
  }

  /** Copies in what fits of `chunk` into this slice; returns the bytes taken. */
  private accept(chunk: Buffer): number {
    if (this.position + chunk.length > this.target.length && !this.slice) {
      // Settled first: aborting the source fails the body, and the reader must learn why (an overflow), not that it was aborted.
      this.fail(new BodyOverflowError(this.target.length - this.position + this.taken, this.taken + chunk.length));
      this.abort();
      return 0;
    }
    const taken = Math.min(chunk.length, this.target.length - this.position);
    chunk.copy(this.target, this.position, 0, taken);
    this.advance(taken);
    return taken;
  }

  finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.detach?.();
    this.resolve(this.taken);
  }

  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.detach?.();
    this.reject(err);
  }
}

/** The server sent more bytes than the requested range holds (retried: engine/retry.ts). */
export class BodyOverflowError extends Error {
  readonly code = "S3X_BODY_OVERFLOW";
  constructor(
    readonly expected: number,
    readonly got: number,
  ) {
    super(`response body longer than expected (${expected} bytes, got at least ${got})`);
  }
}
