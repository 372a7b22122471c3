import { connect, isIP, type Socket } from "node:net";
import { HttpResponse } from "@smithy/core/protocols";
import type { AddressPool, HostPools } from "./pools.js";
import { ResponseBody, type BodySource } from "./response-body.js";
import { ADDRESS_FAILURE_CODES, abortReason, codedError, describeCode } from "./failures.js";
import { watchAbort } from "./abort-watch.js";
import { StragglerError, type TrackedRequest } from "./stragglers.js";
import type { AttemptRouting } from "./routing.js";

/**
 * s3x's own HTTP/1.1 client for every request over plain HTTP: ranged GETs
 * and part uploads above all, and the rest (HEAD, POST, DELETE) so that such
 * a run never needs undici (over TLS, undici carries everything).
 *
 * Why: with undici every socket read is a fresh Buffer that is parsed,
 * handed through its dispatcher and then copied into the part buffer; on
 * our 2 cores that costs ~2.2 client CPU-s per GiB downloaded, and every
 * CPU-second the client burns is one the server does not get. Here the
 * socket is opened with Node's `onread` option, and once the response
 * headers are in and the engine waits with a part buffer (ResponseBody
 * `readInto`), each socket read lands straight in that part buffer: no
 * allocation, no copy, no stream per chunk (BRIEF §7: ~0.9 CPU-s/GiB).
 *
 * Uploads take this path too: the part buffer is written to the socket in
 * slices, one after the other as the kernel takes them, so each completed
 * write is the upload's progress (per-address rates, straggler watch) and
 * keeps the socket's timer alive; that costs ~0.1 client CPU-s per GiB less
 * than undici's iterable bodies, with far less variance.
 *
 * The request itself is the one the AWS SDK built and signed; only the
 * bytes' way differs. Connections are kept alive per front-end address,
 * beside that address's undici pool, and every request keeps the address's
 * counters, health and straggler watch exactly as the undici path does.
 * Error responses (any status) flow through the same ResponseBody stream,
 * so the SDK parses S3 errors as always.
 */

/** Header reads (and chunked or error bodies) go through this much scratch space per connection. */
const SCRATCH_BYTES = 64 * 1024;
/** Large request bodies go out in slices of this size (here and on undici's path). */
export const UPLOAD_SLICE_BYTES = 512 * 1024;

/**
 * Whether a request body is sent (and counted) slice by slice: bodies of at
 * least two slices; smaller ones go out with the head in one write.
 */
export function sentInSlices(bytes: number): boolean {
  return bytes >= UPLOAD_SLICE_BYTES * 2;
}
/** An idle keep-alive connection is closed after this long (undici's keepAliveTimeout here too). */
const IDLE_TIMEOUT_MS = 30_000;
const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");

export interface RawTimeouts {
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  stallTimeoutMs: number;
  connectionsPerAddress: number;
}

/** Idle keep-alive connections per address, beside the address's undici pool. */
export class RawPools {
  private readonly idle = new Map<AddressPool, RawConnection[]>();
  private readonly open = new Set<RawConnection>();
  private closed = false;

  constructor(readonly timeouts: RawTimeouts) {}

  /** An idle connection to `address`, or a new one (always new when `fresh`). */
  take(address: AddressPool, port: number, fresh = false): { conn: RawConnection; reused: boolean } {
    const list = fresh ? undefined : this.idle.get(address);
    while (list && list.length > 0) {
      const conn = list.pop()!;
      if (conn.usable) return { conn, reused: true };
    }
    const conn = new RawConnection(this, address, port);
    this.open.add(conn);
    return { conn, reused: false };
  }

  /** A connection whose exchange ended cleanly goes back to its address's idle list. */
  giveBack(conn: RawConnection): void {
    if (this.closed || conn.address.retired || !conn.usable) {
      conn.destroy();
      return;
    }
    let list = this.idle.get(conn.address);
    if (!list) this.idle.set(conn.address, (list = []));
    // Too many idle connections for one address serve nobody.
    if (list.length >= this.timeouts.connectionsPerAddress) {
      conn.destroy();
      return;
    }
    list.push(conn);
    conn.goIdle();
  }

  forget(conn: RawConnection): void {
    this.open.delete(conn);
    const list = this.idle.get(conn.address);
    const i = list ? list.indexOf(conn) : -1;
    if (list && i >= 0) list.splice(i, 1);
  }

  close(): void {
    this.closed = true;
    if (this.open.size === 0) return;
    const err = codedError("UND_ERR_CLOSED", "connection closed: the client is shutting down");
    for (const conn of [...this.open]) conn.destroy(err);
    this.idle.clear();
  }
}

type Phase = "connecting" | "idle" | "sending" | "headers" | "body";
type Framing = "length" | "chunked" | "close";

/** One keep-alive HTTP/1.1 connection to one front-end address. */
export class RawConnection {
  private readonly socket: Socket;
  private readonly scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  /** Bytes of a header block gathered so far at the start of `scratch`. */
  private headerBytes = 0;
  private phase: Phase = "connecting";
  private exchange: Exchange | undefined;
  /** Whether the buffer the socket reads into next is the exchange's part buffer. */
  private direct = false;
  /** A request body is still being written (an early answer must not free the connection). */
  private sending = false;
  /** Body bytes read with the response head, waiting in scratch for a consumer. */
  private held: Buffer | undefined;
  private paused = false;
  private destroyed = false;

  constructor(
    private readonly owner: RawPools,
    readonly address: AddressPool,
    port: number,
  ) {
    const host = address.address;
    this.socket = connect({
      host,
      port,
      family: isIP(host) || undefined,
      noDelay: true,
      onread: { buffer: () => this.nextBuffer(), callback: (n: number, buf: Uint8Array) => this.onRead(n, buf) },
    });
    // Flowing from the start, so the end of the stream is reported (no data ever enters the Readable).
    this.socket.resume();
    this.socket.setTimeout(owner.timeouts.connectTimeoutMs);
    this.socket.on("connect", () => {
      if (this.phase === "connecting") this.phase = this.exchange ? (this.sending ? "sending" : "headers") : "idle";
      this.socket.setTimeout(this.phase === "sending" ? owner.timeouts.stallTimeoutMs : this.exchange ? owner.timeouts.firstByteTimeoutMs : IDLE_TIMEOUT_MS);
    });
    this.socket.on("timeout", () => this.onTimeout());
    this.socket.on("error", (err) => this.fail(err));
    this.socket.on("end", () => this.onEnd());
    this.socket.on("close", () => this.onEnd());
  }

  get usable(): boolean {
    return !this.destroyed && (this.phase === "connecting" || this.phase === "idle") && this.exchange === undefined;
  }

  /** Sends the request head; the answer arrives through `exchange`. */
  start(exchange: Exchange, head: string, body: Uint8Array | undefined): void {
    this.exchange = exchange;
    this.headerBytes = 0;
    this.socket.ref();
    if (this.phase === "idle") {
      this.phase = "headers";
      this.socket.setTimeout(this.owner.timeouts.firstByteTimeoutMs);
    }
    if (!body || body.byteLength === 0) {
      this.socket.write(head, "latin1");
      return;
    }
    if (!sentInSlices(body.byteLength)) {
      // Head and body in one writev.
      this.socket.cork();
      this.socket.write(head, "latin1");
      this.socket.write(body);
      this.socket.uncork();
      return;
    }
    this.sending = true;
    if (this.phase === "headers") {
      this.phase = "sending";
      this.socket.setTimeout(this.owner.timeouts.stallTimeoutMs);
    }
    this.socket.write(head, "latin1");
    this.sendSlice(exchange, body, 0);
  }

  /**
   * Writes the slice of `body` at `offset`, and the next one once the kernel
   * has taken it. A connection that failed or moved on stops here.
   */
  private sendSlice(exchange: Exchange, body: Uint8Array, offset: number): void {
    const end = Math.min(body.byteLength, offset + UPLOAD_SLICE_BYTES);
    this.socket.write(body.subarray(offset, end), (err) => {
      if (err || this.destroyed || this.exchange !== exchange) return;
      exchange.noteSent(end - offset);
      if (end < body.byteLength) return this.sendSlice(exchange, body, end);
      this.sending = false;
      if (this.phase === "sending") {
        // All sent: now the server has until the first-byte timeout to answer.
        this.phase = "headers";
        this.socket.setTimeout(this.owner.timeouts.firstByteTimeoutMs);
      }
    });
  }

  /** Back in the idle list: it must not keep the process alive. */
  goIdle(): void {
    this.phase = "idle";
    this.paused = false;
    this.socket.setTimeout(IDLE_TIMEOUT_MS);
    this.socket.unref();
    if (this.socket.isPaused()) this.socket.resume();
  }

  /** Consumer-driven flow control for the response body. */
  pause(): void {
    this.paused = true;
    this.socket.pause();
    // A body nobody reads yet is not a stalled server.
    this.socket.setTimeout(0);
  }

  resume(): void {
    if (this.destroyed) return;
    this.paused = false;
    const held = this.held;
    const exchange = this.exchange;
    if (held && exchange) {
      this.held = undefined;
      // Delivered before any further read can reuse the scratch space.
      if (!this.onBodyBytes(exchange, held) || this.exchange !== exchange || this.paused) return;
    }
    this.socket.setTimeout(this.owner.timeouts.stallTimeoutMs);
    this.socket.resume();
  }

  destroy(err?: Error): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.held = undefined;
    this.owner.forget(this);
    this.socket.destroy();
    const exchange = this.exchange;
    this.exchange = undefined;
    if (exchange && err) exchange.fail(err);
  }

  private fail(err: Error): void {
    this.destroy(err);
  }

  private onEnd(): void {
    const exchange = this.exchange;
    if (exchange && this.phase === "body" && exchange.framing === "close") {
      this.exchange = undefined;
      this.destroy();
      exchange.complete(false);
      return;
    }
    if (this.destroyed) return;
    if (!this.exchange) this.destroy();
    else this.destroy(codedError("UND_ERR_SOCKET", "other side closed"));
  }

  private onTimeout(): void {
    switch (this.phase) {
      case "connecting":
        return this.fail(codedError("UND_ERR_CONNECT_TIMEOUT", "connect timed out"));
      case "sending":
        return this.fail(codedError("UND_ERR_BODY_TIMEOUT", "request body stalled: the server stopped taking bytes"));
      case "headers":
        return this.fail(codedError("UND_ERR_HEADERS_TIMEOUT", "no response headers before the first-byte timeout"));
      case "body":
        return this.fail(codedError("UND_ERR_BODY_TIMEOUT", "response body stalled"));
      default:
        this.destroy(); // idle too long
    }
  }

  /** Where the socket's next read goes: the part buffer when possible, else scratch space. */
  private nextBuffer(): Uint8Array {
    const exchange = this.exchange;
    if (this.phase === "body" && exchange && exchange.framing === "length" && exchange.remaining > 0) {
      const sink = exchange.body.directSink();
      // A part buffer takes the whole rest of the body; a slice what it has room for.
      if (sink && (sink.room >= exchange.remaining || (sink.slice && sink.room > 0))) {
        this.direct = true;
        return sink.window(Math.min(sink.room, exchange.remaining));
      }
    }
    this.direct = false;
    if (this.phase === "headers" || this.phase === "sending") return this.scratch.subarray(this.headerBytes);
    return this.scratch;
  }

  /** Returns false to stop reading (the consumer is not ready for more). */
  private onRead(n: number, buf: Uint8Array): boolean {
    const exchange = this.exchange;
    if (!exchange) {
      // Bytes nobody asked for: the connection is out of step with the server.
      this.destroy();
      return false;
    }
    exchange.noteBytes(n);
    if (this.phase === "headers" || this.phase === "sending") return this.onHeaderBytes(exchange, n);
    if (this.direct) {
      exchange.body.directSink()!.advance(n);
      exchange.remaining -= n;
      if (exchange.remaining === 0) this.endBody(exchange);
      return true;
    }
    return this.onBodyBytes(exchange, Buffer.from(buf.buffer, buf.byteOffset, n));
  }

  private onHeaderBytes(exchange: Exchange, n: number): boolean {
    const start = Math.max(0, this.headerBytes - 3);
    this.headerBytes += n;
    const end = this.scratch.subarray(0, this.headerBytes).indexOf(CRLFCRLF, start);
    if (end < 0) {
      if (this.headerBytes >= SCRATCH_BYTES) this.fail(codedError("UND_ERR_HEADERS_OVERFLOW", "response headers too large"));
      return true;
    }
    let head: ParsedHead;
    try {
      head = parseHead(this.scratch.toString("latin1", 0, end));
    } catch (err) {
      this.fail(err as Error);
      return false;
    }
    const rest = this.scratch.subarray(end + 4, this.headerBytes);
    if (head.status < 200) {
      // 100 Continue and friends: the real answer follows.
      rest.copy(this.scratch, 0);
      this.headerBytes = 0;
      return rest.length > 0 ? this.onHeaderBytes(exchange, rest.length) : true;
    }
    this.phase = "body";
    this.socket.setTimeout(this.owner.timeouts.stallTimeoutMs);
    try {
      exchange.begin(head);
    } catch (err) {
      this.fail(err as Error);
      return false;
    }
    if (exchange.framing === "length" && exchange.remaining === 0) {
      this.endBody(exchange);
      return true;
    }
    if (!exchange.body.hasSink) {
      // Until the engine brings its part buffer (or the SDK reads the stream),
      // read no further. Body bytes that came with the head wait in scratch
      // space (nothing reads into it meanwhile) and go straight to the part
      // buffer when it comes: no copy into the stream, no allocation (a small
      // object is mostly such bytes).
      // (Bytes beyond the Content-Length go the usual way, which fails them.)
      if (rest.length > 0 && exchange.framing === "length" && rest.length <= exchange.remaining) this.held = rest;
      else if (rest.length > 0 && !this.onBodyBytes(exchange, rest)) return false;
      if (this.exchange !== exchange) return true; // that was the whole body
      this.pause();
      return false;
    }
    return rest.length > 0 ? this.onBodyBytes(exchange, rest) : true;
  }

  /** Body bytes that sit in scratch space: copied on (chunked framing undone). */
  private onBodyBytes(exchange: Exchange, bytes: Buffer): boolean {
    if (exchange.framing === "chunked") {
      let done: boolean;
      try {
        done = exchange.chunks!.feed(bytes, (piece) => exchange.deliver(piece));
      } catch (err) {
        this.fail(err as Error);
        return false;
      }
      if (done) this.endBody(exchange);
      return true;
    }
    if (exchange.framing === "length" && bytes.length > exchange.remaining) {
      this.fail(codedError("UND_ERR_RES_CONTENT_LENGTH_MISMATCH", "response body longer than its Content-Length"));
      return false;
    }
    exchange.deliver(bytes);
    exchange.remaining -= bytes.length;
    if (exchange.framing === "length" && exchange.remaining === 0) this.endBody(exchange);
    return true;
  }

  private endBody(exchange: Exchange): void {
    this.exchange = undefined;
    this.phase = "idle";
    // An answer before the whole body was sent (an early error): the rest of
    // the body would be read as the next request, so the connection goes.
    if (exchange.keepAlive && !this.sending) this.owner.giveBack(this);
    else this.destroy();
    exchange.complete(true);
  }
}

interface ParsedHead {
  status: number;
  reason: string;
  headers: Record<string, string>;
  http10: boolean;
}

function parseHead(text: string): ParsedHead {
  const lines = text.split("\r\n");
  const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]);
  if (!statusLine) throw codedError("UND_ERR_SOCKET", `malformed HTTP status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { status: Number(statusLine[2]), reason: statusLine[3] ?? "", headers, http10: statusLine[1] === "0" };
}

/** Undoes Transfer-Encoding: chunked across reads. */
class ChunkDecoder {
  private state: "size" | "data" | "data-crlf" | "trailer" = "size";
  private line = "";
  private left = 0;

  /** Feeds bytes; `emit` gets the data (views valid only during the call). Returns true at the end of the body. */
  feed(bytes: Buffer, emit: (piece: Buffer) => void): boolean {
    let i = 0;
    while (i < bytes.length) {
      if (this.state === "data") {
        const take = Math.min(this.left, bytes.length - i);
        emit(bytes.subarray(i, i + take));
        i += take;
        this.left -= take;
        if (this.left === 0) this.state = "data-crlf";
        continue;
      }
      const nl = bytes.indexOf(10, i);
      const upto = nl < 0 ? bytes.length : nl;
      this.line += bytes.toString("latin1", i, upto);
      if (this.line.length > 4096) throw codedError("UND_ERR_SOCKET", "malformed chunked body");
      if (nl < 0) return false;
      i = nl + 1;
      const line = this.line.replace(/\r$/, "");
      this.line = "";
      if (this.state === "data-crlf") {
        if (line !== "") throw codedError("UND_ERR_SOCKET", "malformed chunked body");
        this.state = "size";
      } else if (this.state === "size") {
        const size = parseInt(line.split(";")[0].trim(), 16);
        if (!Number.isSafeInteger(size) || size < 0) throw codedError("UND_ERR_SOCKET", "malformed chunk size");
        if (size === 0) this.state = "trailer";
        else {
          this.left = size;
          this.state = "data";
        }
      } else if (line === "") {
        if (i !== bytes.length) throw codedError("UND_ERR_SOCKET", "bytes after the end of a chunked body");
        return true; // end of trailers
      }
    }
    return false;
  }
}

/** One request and its response, with the address's accounting. */
class Exchange implements BodySource {
  readonly body = new ResponseBody();
  framing: Framing = "close";
  remaining = Number.POSITIVE_INFINITY;
  keepAlive = false;
  chunks: ChunkDecoder | undefined;
  conn: RawConnection | undefined;
  aborted = false;
  private started = false;
  private settled = false;
  private unwatchAbort: (() => void) | undefined;
  private serverError = false;
  private gotBytes = false;

  constructor(
    private readonly address: AddressPool,
    private readonly host: HostPools,
    private readonly tracked: TrackedRequest | undefined,
    private readonly signal: AbortSignal | undefined,
    private readonly headOnly: boolean,
    private readonly resolve: (response: HttpResponse) => void,
    private readonly reject: (err: Error) => void,
    /** Sends the request again on a new connection; false if it may not. */
    private readonly resend: (err: Error) => boolean,
  ) {}

  /** A slice of a large request body went out: the address's rate and the straggler watch see it. */
  noteSent(n: number): void {
    this.address.noteBytesOut(n);
    this.tracked?.progress(n);
  }

  noteBytes(n: number): void {
    this.gotBytes = true;
    this.address.noteBytesIn(n);
    if (this.started) this.tracked?.progress(n);
  }

  begin(head: ParsedHead): void {
    const headers = head.headers;
    const te = headers["transfer-encoding"];
    if (this.headOnly || head.status === 204 || head.status === 304) {
      // These answers describe a body they do not carry.
      this.framing = "length";
      this.remaining = 0;
    } else if (te !== undefined && /chunked/i.test(te)) {
      this.framing = "chunked";
      this.chunks = new ChunkDecoder();
    } else if (headers["content-length"] !== undefined) {
      this.framing = "length";
      this.remaining = Number(headers["content-length"]);
      if (!Number.isSafeInteger(this.remaining) || this.remaining < 0) throw codedError("UND_ERR_SOCKET", `malformed Content-Length: ${headers["content-length"]}`);
    }
    const connection = (headers.connection ?? "").toLowerCase();
    this.keepAlive = this.framing !== "close" && (head.http10 ? connection.includes("keep-alive") : !connection.includes("close"));
    if (head.status >= 500) {
      this.serverError = true;
      this.host.noteServerError(this.address, head.status);
    }
    this.started = true;
    this.body.attach(this);
    this.resolve(new HttpResponse({ statusCode: head.status, reason: head.reason, headers, body: this.body }));
  }

  deliver(piece: Buffer): void {
    // Only a waiting part buffer copies at once; the stream keeps what it is given.
    this.body.deliver(this.body.hasSink ? piece : Buffer.from(piece));
  }

  complete(succeeded: boolean): void {
    if (this.settled) return;
    this.settle(succeeded && !this.serverError);
    if (!this.serverError) this.address.noteSuccess();
    this.body.finish();
  }

  fail(err: Error): void {
    if (this.settled) return;
    // A kept-alive connection the server closed meanwhile fails before any byte: that is not the address's fault.
    if (!this.gotBytes && !this.aborted && this.resend(err)) return;
    this.settle(false);
    const code = (err as NodeJS.ErrnoException).code;
    // A cancellation by the caller says nothing about the address.
    if (!(this.signal?.aborted && err === this.signal.reason)) this.address.counters.errors++;
    if (code && ADDRESS_FAILURE_CODES.has(code)) this.host.markBad(this.address, describeCode(code));
    if (!(err instanceof StragglerError)) (err as Error & { address?: string }).address ??= this.address.address;
    if (this.started) this.body.fail(err);
    else this.reject(err);
  }

  /** Cancels the request (caller's signal, straggler watch, a consumer that gave up). */
  abort(reason: Error): void {
    if (this.settled) return;
    this.aborted = true;
    const conn = this.conn;
    if (conn) conn.destroy(reason);
    else this.fail(reason);
  }

  // Once settled, the connection may already serve another request: hands off.
  pause(): void {
    if (!this.settled) this.conn?.pause();
  }

  resume(): void {
    if (!this.settled) this.conn?.resume();
  }

  private settle(succeeded: boolean): void {
    this.settled = true;
    this.address.inFlight--;
    this.host.stragglers.untrack(this.tracked, succeeded);
    this.unwatchAbort?.();
  }

  /** From now until it settles, the exchange aborts when its signal does (checked not aborted yet). */
  watchSignal(): void {
    const signal = this.signal;
    if (signal) this.unwatchAbort = watchAbort(signal, () => this.abort(abortReason(signal)));
  }
}

/** Methods the raw path sends: every one S3 uses. */
export const RAW_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "POST", "DELETE"]);

/**
 * Methods the raw path may send again on a fresh connection after a stale
 * keep-alive one failed before any answer: idempotent ones only. A POST
 * (CreateMultipartUpload) might have reached the server; its retry is the
 * engine's decision, as it is on undici's path.
 */
const RESENDABLE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "DELETE"]);

/**
 * Sends a request (already signed) to
 * `address` on a raw keep-alive connection and resolves when the response
 * headers are in; the body then flows into a ResponseBody whose `readInto`
 * lets the socket fill the part buffer. With `fresh` it goes out on a new
 * connection (see net/document-answers.ts), which then joins the pool.
 */
export function rawRequest(
  pools: RawPools,
  address: AddressPool,
  host: HostPools,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array | undefined,
  expectedBytes: number,
  signal: AbortSignal | undefined,
  routing?: AttemptRouting,
  fresh = false,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    if (!RAW_METHODS.has(method)) {
      reject(new Error(`the raw HTTP path does not send ${method}`));
      return;
    }
    address.inFlight++;
    address.counters.requests++;
    const sending = body?.byteLength ?? 0;
    // A large body is counted slice by slice as it goes out (RawConnection.sendSlice).
    if (!sentInSlices(sending)) address.noteBytesOut(sending);
    let head = `${method} ${path} HTTP/1.1\r\n`;
    // A PUT or POST always states its length, even an empty one (UploadPartCopy, CreateMultipartUpload): servers answer 411 otherwise.
    if ((sending > 0 || method === "PUT" || method === "POST") && !hasContentLength(headers)) head += `content-length: ${sending}\r\n`;
    for (const name in headers) {
      const value = headers[name];
      if (/[\r\n]/.test(value)) {
        address.inFlight--;
        reject(new Error(`header ${name} holds a line break`));
        return;
      }
      head += `${name}: ${value}\r\n`;
    }
    head += "\r\n";
    let exchange: Exchange;
    let resent = false;
    const send = (): void => {
      // The second try opens a new connection: the other idle ones may be as stale as the first.
      const { conn, reused } = pools.take(address, port, resent || fresh);
      exchange.conn = conn;
      conn.start(exchange, head, body);
      canResend = reused && RESENDABLE_METHODS.has(method);
    };
    let canResend = false;
    const tracked = host.stragglers.track(address, expectedBytes, (err) => exchange.abort(err));
    // The retry loop follows a large request's progress to decide on a hedged duplicate (engine/hedge.ts).
    if (routing) routing.tracked = tracked;
    exchange = new Exchange(address, host, tracked, signal, method === "HEAD", resolve, reject, () => {
      // One fresh connection for a request whose kept-alive connection had gone stale.
      if (!canResend || resent) return false;
      resent = true;
      send();
      return true;
    });
    exchange.watchSignal();
    send();
  });
}

function hasContentLength(headers: Record<string, string>): boolean {
  for (const name in headers) if (name.toLowerCase() === "content-length") return true;
  return false;
}
