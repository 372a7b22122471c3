import type { Socket } from "node:net";
import type { FrontEndAddress } from "../pools.js";
import { codedError } from "../failures.js";
import { sentInSlices } from "../upload-slices.js";
import { writeRequest } from "./request-writer.js";
import { dropEmptyLines, headIn } from "./response-head.js";
import type { Exchange } from "./exchange.js";
import { IDLE_TIMEOUT_MS, timeoutFailure, type Phase, type RawTimeouts } from "./phases.js";
import { addressFailed, type SocketReader } from "../tls-dial.js";
import { openSocket, redialWithCa, tlsConnectionLine } from "./dial.js";

/** Header reads (and chunked or error bodies) go through this much scratch space per connection. */
const SCRATCH_BYTES = 64 * 1024;
/** Where reads land while reading is to stop (a TLS socket still delivers what it decrypted): one TLS record. */
const OVERFLOW_BYTES = 16 * 1024;

/** What a connection needs of the pool that keeps it (net/http1/pool.ts). */
export interface ConnectionOwner {
  readonly timeouts: RawTimeouts;
  /** A connection whose exchange ended cleanly, to keep for the next request. */
  giveBack(conn: RawConnection): void;
  /** A connection that closed. */
  forget(conn: RawConnection): void;
}

/**
 * One keep-alive HTTP/1.1 connection to one front-end address: the socket's
 * state machine (connecting, sending, waiting for headers, reading the body,
 * idle), its timeouts, and where each socket read lands (scratch space for
 * heads, the waiting part buffer for bodies: see net/http1/request.ts).
 */
export class RawConnection implements SocketReader {
  /** Replaced once at most: by the dial with the CAs after a handshake without them failed (onSocketError). */
  private socket: Socket;
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
  /** Bytes that came while reads had to stop (TLS only), copied; they go first on resume. */
  private unread: Buffer | undefined;
  /** The buffer the socket reads into next, as `nextBuffer` last named it. */
  private handedOut: Uint8Array | undefined;
  /** What `nextBuffer` names while paused (allocated at the first pause). */
  private overflow: Buffer | undefined;
  /** The socket offers a session with no CA: a failed handshake is dialled again with them (onSocketError). */
  private caOnRetry = false;
  /** When the socket was dialled (a redial gets what is left of the connect timeout). */
  private readonly dialledAt = Date.now();
  /** A request that waits for the handshake, so that it can go on the second dial if the first fails. */
  private waitingRequest: { head: string; body: Uint8Array | undefined } | undefined;

  constructor(
    private readonly owner: ConnectionOwner,
    readonly address: FrontEndAddress,
    private readonly port: number,
    /** Over TLS: a socket already connected (a probe's), else one is dialled. */
    spare?: Socket,
  ) {
    const opened = openSocket(address, port, this, spare);
    this.socket = opened.socket;
    this.caOnRetry = opened.withoutCa;
    this.watch(opened.connected);
  }

  /** Follows the socket's events; `connected`: it is connected already (a probe's), else it has `connectMs` to connect. */
  private watch(connected: boolean, connectMs = this.owner.timeouts.connectTimeoutMs): void {
    const socket = this.socket;
    // Flowing from the start, so the end of the stream is reported (no data ever enters the Readable).
    socket.resume();
    if (connected) this.onConnect();
    else {
      socket.setTimeout(connectMs);
      socket.on(this.address.tls ? "secureConnect" : "connect", () => this.onConnect());
    }
    socket.on("timeout", () => this.onTimeout());
    socket.on("error", (err) => this.onSocketError(err));
    socket.on("end", () => this.onEnd());
    socket.on("close", () => this.onEnd());
  }

  private onConnect(): void {
    if (this.address.tls) this.owner.timeouts.debug?.(tlsConnectionLine(this.address, this.port, this.socket));
    this.caOnRetry = false;
    if (this.phase === "connecting") this.phase = this.exchange ? (this.sending ? "sending" : "headers") : "idle";
    this.socket.setTimeout(this.phase === "sending" ? this.owner.timeouts.stallTimeoutMs : this.exchange ? this.owner.timeouts.firstByteTimeoutMs : IDLE_TIMEOUT_MS);
    const waiting = this.waitingRequest;
    this.waitingRequest = undefined;
    if (waiting && this.exchange) this.send(this.exchange, waiting.head, waiting.body);
  }

  /**
   * A handshake that offered the session with no CA and failed (the server
   * did not resume it: the certificate could not be checked), before
   * anything was sent: the same connection again, with the CAs. A failure
   * of the address itself (refused, unreachable, no answer) is one.
   */
  private onSocketError(err: Error): void {
    if (!this.caOnRetry || this.phase !== "connecting" || this.destroyed || addressFailed(err)) return this.fail(err);
    this.caOnRetry = false;
    this.socket = redialWithCa(this.socket, this.address, this.port, this);
    if (!this.exchange) this.socket.unref();
    // Both dials within the one connect timeout.
    this.watch(false, Math.max(1, this.owner.timeouts.connectTimeoutMs - (Date.now() - this.dialledAt)));
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
    // TLS sends nothing before its handshake ends anyway: waiting for it costs no time.
    if (this.caOnRetry && this.phase === "connecting") this.waitingRequest = { head, body };
    else this.send(exchange, head, body);
  }

  private send(exchange: Exchange, head: string, body: Uint8Array | undefined): void {
    if (body && sentInSlices(body.byteLength)) {
      this.sending = true;
      if (this.phase === "headers") {
        this.phase = "sending";
        this.socket.setTimeout(this.owner.timeouts.stallTimeoutMs);
      }
    }
    writeRequest(this.socket, head, body, {
      stillWanted: () => !this.destroyed && this.exchange === exchange,
      sent: (n) => exchange.noteSent(n),
      done: () => {
        this.sending = false;
        if (this.phase !== "sending") return;
        // All sent: now the server has until the first-byte timeout to answer.
        this.phase = "headers";
        this.socket.setTimeout(this.owner.timeouts.firstByteTimeoutMs);
      },
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
    this.exchange?.accounting.holdReads(true);
    this.socket.pause();
    // A body nobody reads yet is not a stalled server.
    this.socket.setTimeout(0);
  }

  resume(): void {
    if (this.destroyed) return;
    this.paused = false;
    this.exchange?.accounting.holdReads(false);
    const held = this.held;
    const exchange = this.exchange;
    if (held && exchange) {
      this.held = undefined;
      // Delivered before any further read can reuse the scratch space.
      if (!this.onBodyBytes(exchange, held) || this.exchange !== exchange || this.paused) return;
    }
    const unread = this.unread;
    if (unread && exchange) {
      this.unread = undefined;
      if (!this.feed(unread) || this.exchange !== exchange || this.paused) return;
    }
    this.socket.setTimeout(this.owner.timeouts.stallTimeoutMs);
    this.socket.resume();
  }

  destroy(err?: Error): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.held = undefined;
    this.unread = undefined;
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
    // A server that closes during a handshake without CA may just not take the session.
    if (this.caOnRetry && this.phase === "connecting" && !this.destroyed) return this.onSocketError(codedError("ECONNRESET", "closed during the TLS handshake"));
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
    const failure = timeoutFailure(this.phase);
    if (failure) this.fail(failure);
    else this.destroy(); // idle too long
  }

  /** Where the socket's next read goes: the part buffer when possible, else scratch space. */
  nextBuffer(): Uint8Array {
    const handed = this.pickBuffer();
    this.handedOut = handed;
    return handed;
  }

  private pickBuffer(): Uint8Array {
    if (this.paused) {
      // Never scratch space: it may hold body bytes that came with the head (`held`).
      this.direct = false;
      this.overflow ??= Buffer.allocUnsafeSlow(OVERFLOW_BYTES);
      return this.overflow;
    }
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

  /**
   * Bytes that landed elsewhere than where they belong now, copied and placed
   * as a read would be: what a TLS socket decrypted after reads had to stop
   * (kept in `unread` while paused), or a probe's first read into the buffer
   * it had before this connection adopted it.
   */
  private stray(n: number, buf: Uint8Array): boolean {
    const bytes = Buffer.from(buf.subarray(0, n));
    if (this.paused) {
      this.unread = this.unread ? Buffer.concat([this.unread, bytes]) : bytes;
      return false;
    }
    return this.feed(bytes);
  }

  /** Places `chunk` piece by piece as reads would; returns false when reading must stop (the rest waits in `unread`). */
  private feed(chunk: Buffer): boolean {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.paused) {
        // The consumer is not ready: the rest waits here, not copied into the stream.
        this.unread = chunk.subarray(offset);
        return false;
      }
      const target = this.pickBuffer();
      const bodyToStream = this.phase === "body" && !this.direct;
      const n = bodyToStream ? chunk.length - offset : Math.min(target.byteLength, chunk.length - offset);
      const piece = bodyToStream ? chunk.subarray(offset) : target;
      if (!bodyToStream) chunk.copy(target, 0, offset, offset + n);
      offset += n;
      if (!this.consume(n, piece)) {
        if (!this.destroyed && offset < chunk.length) this.unread = chunk.subarray(offset);
        return false;
      }
    }
    return true;
  }

  /** A socket read of `n` bytes into `buf`; returns false to stop reading (the consumer is not ready for more). */
  onRead(n: number, buf: Uint8Array): boolean {
    if (buf !== this.handedOut || buf === this.overflow) return this.stray(n, buf);
    return this.consume(n, buf);
  }

  private consume(n: number, buf: Uint8Array): boolean {
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
    if (this.headerBytes === 0 && (n = dropEmptyLines(this.scratch, n)) === 0) return true;
    this.headerBytes += n;
    let found: ReturnType<typeof headIn>;
    try {
      found = headIn(this.scratch, this.headerBytes, n);
    } catch (err) {
      this.fail(err as Error);
      return false;
    }
    if (!found) return true;
    const { head, end } = found;
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
      // Bytes after a body-less answer answer nothing (s3x never pipelines): it stands, the connection goes.
      if (rest.length > 0) exchange.keepAlive = false;
      this.endBody(exchange);
      return true;
    }
    if (!exchange.body.hasSink) {
      // Until the engine brings its part buffer (or the request layer reads the stream),
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
