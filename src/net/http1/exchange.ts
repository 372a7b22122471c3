import type { HttpAnswer } from "../http-answer.js";
import { ResponseBody, type BodySource } from "../response-body.js";
import type { RequestAccounting } from "../request-accounting.js";
import { ChunkDecoder } from "./chunked.js";
import { framingOf, type Framing, type ParsedHead } from "./response-head.js";

/** What an exchange asks of the connection carrying it. */
export interface ExchangeConnection {
  pause(): void;
  resume(): void;
  destroy(err?: Error): void;
}

/**
 * One request and its response on a raw connection: the body's framing and
 * delivery, settling the caller's promise, and the request's accounting
 * (net/request-accounting.ts).
 */
export class Exchange implements BodySource {
  readonly body = new ResponseBody();
  framing: Framing = "close";
  remaining = Number.POSITIVE_INFINITY;
  keepAlive = false;
  chunks: ChunkDecoder | undefined;
  conn: ExchangeConnection | undefined;
  aborted = false;
  private started = false;
  private gotBytes = false;
  readonly accounting: RequestAccounting;

  constructor(
    /** Opens the request's books; their abort hook cancels this exchange. */
    account: (abort: (reason: Error) => void) => RequestAccounting,
    private readonly headOnly: boolean,
    private readonly resolve: (response: HttpAnswer) => void,
    private readonly reject: (err: Error) => void,
    /** Sends the request again on a new connection; false if it may not (net/http1/resend.ts). */
    private readonly resend: (err: Error) => boolean,
  ) {
    this.accounting = account((reason) => this.abort(reason));
  }

  /** A slice of a large request body went out. */
  noteSent(n: number): void {
    this.accounting.sent(n);
  }

  /** Bytes read from the socket for this exchange (head or body). */
  noteBytes(n: number): void {
    this.gotBytes = true;
    this.accounting.received(n);
  }

  begin(head: ParsedHead): void {
    const { framing, length, keepAlive } = framingOf(head, this.headOnly);
    this.framing = framing;
    this.remaining = length;
    this.keepAlive = keepAlive;
    if (framing === "chunked") this.chunks = new ChunkDecoder();
    this.accounting.answer(head.status);
    this.started = true;
    this.body.attach(this);
    this.resolve({ statusCode: head.status, headers: head.headers, body: this.body });
  }

  deliver(piece: Buffer): void {
    // Only a waiting part buffer copies at once; the stream keeps what it is given.
    this.body.deliver(this.body.hasSink ? piece : Buffer.from(piece));
  }

  /** The body ended; `delimited` is false when only the server's close marked its end. */
  complete(delimited: boolean): void {
    if (this.accounting.settled) return;
    this.accounting.complete(delimited);
    this.body.finish();
  }

  fail(err: Error): void {
    if (this.accounting.settled) return;
    // A kept-alive connection the server closed meanwhile fails before any byte: that is not the address's fault.
    if (!this.gotBytes && !this.aborted && this.resend(err)) return;
    this.accounting.fail(err);
    if (this.started) this.body.fail(err);
    else this.reject(err);
  }

  /** Cancels the request (caller's signal, straggler watch, a consumer that gave up). */
  abort(reason: Error): void {
    if (this.accounting.settled) return;
    this.aborted = true;
    const conn = this.conn;
    if (conn) conn.destroy(reason);
    else this.fail(reason);
  }

  // Once settled, the connection may already serve another request: hands off.
  pause(): void {
    if (!this.accounting.settled) this.conn?.pause();
  }

  resume(): void {
    if (!this.accounting.settled) this.conn?.resume();
  }
}
