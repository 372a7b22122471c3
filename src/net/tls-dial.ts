// TLS connects to one front-end address for s3x's own HTTP/1.1 client and its probes: options and session resumption.
import { isIP, type OnReadOpts, type Socket } from "node:net";
import type { ConnectionOptions, TLSSocket } from "node:tls";
import { codedError } from "./failures.js";
import type { TlsSettings } from "./net-options.js";
import type { ConnectCallback, DialHandle } from "./pools/connect-probe.js";
import { SecureContexts } from "./tls-contexts.js";
import { TLS_SESSION_REFRESH_MS, type TlsSessionStore } from "./tls-session-store.js";

/**
 * Where a TLS socket's decrypted bytes go: read in place with Node's
 * `onread` (tls.connect has it, like net.connect), so that each TLS record
 * is decrypted straight into the buffer `nextBuffer` names (a part buffer)
 * instead of a fresh Buffer per 16 KiB record that is copied and then
 * becomes garbage. `onRead` returns false to stop reading; unlike a plain
 * socket, a TLS socket may still deliver what it already decrypted.
 */
export interface SocketReader {
  nextBuffer(): Uint8Array;
  onRead(n: number, buf: Uint8Array): boolean;
}

/** A socket's current reader: a probe's socket is dialled before the connection that adopts it exists. */
interface ReadRoute {
  reader: SocketReader | undefined;
  unclaimed?: Buffer;
}

/** Where a dialled socket keeps its read route: on the socket itself, no module-wide table. */
const READ_ROUTE = Symbol("s3x.readRoute");

type Routed = { [READ_ROUTE]?: ReadRoute };

/** Makes `reader` the reader of a socket `TlsDialer.dial` opened; false if it did not. */
export function adoptReads(socket: Socket, reader: SocketReader): boolean {
  const route = (socket as Routed)[READ_ROUTE];
  if (!route) return false;
  route.reader = reader;
  return true;
}

/**
 * Opens TLS connections to one front-end address of an https endpoint:
 * the endpoint's name for SNI and the certificate check (the address
 * dialled is an IP; an IP-literal endpoint sends no SNI and is checked
 * against that IP), the CAs and verification of --ca-bundle and
 * --no-verify-ssl, ALPN http/1.1, and the address's last TLS session, so
 * that every connection after the first resumes instead of paying a full
 * handshake (a key exchange and a certificate chain check each).
 *
 * The first connection (the address's probe) may resume a session kept by
 * an earlier run (net/tls-session-store.ts): then no CA is loaded at all,
 * which is most of a short run's TLS cost (see SecureContexts). If the
 * server does not take the session, that handshake fails verification
 * against no CA, before anything is sent, and the probe dials again as usual.
 */
export class TlsDialer {
  /** The last session ticket the server gave on any connection to this address. */
  private session: Buffer | undefined;
  /** Whether certificates are checked (--no-verify-ssl: false). */
  private readonly verify: boolean;
  private readonly contexts: SecureContexts;
  /** Sessions kept between runs; only where certificates are verified. */
  private readonly sessions: TlsSessionStore | undefined;
  /** Whether this process has kept a session of this address for later runs (once is enough). */
  private kept = false;
  /** When the full handshake behind the kept session this process resumed checked the certificate; undefined if none was resumed. */
  private keptVerifiedAt: number | undefined;

  constructor(
    private readonly serverName: string,
    settings: TlsSettings | undefined,
  ) {
    this.verify = settings?.verify ?? true;
    this.contexts = settings?.contexts ?? new SecureContexts(settings?.ca, this.verify);
    this.sessions = this.verify ? settings?.sessions : undefined;
  }

  /**
   * A pool connection's socket (net/http1/connection.ts). While this process
   * holds a session of the address but has loaded no CA (its probe resumed a
   * session kept by an earlier run), the connection offers that session with
   * no CA, as the probe did: otherwise the second connection of a run would
   * load them (~20 ms of CPU) only to resume the same session. `withoutCa`
   * then says that a handshake that fails, before anything was sent, is to
   * be dialled again with `dialWithCa`.
   */
  connect(host: string, port: number, reader: SocketReader): { socket: TLSSocket; withoutCa: boolean } {
    const withoutCa = this.verify && this.session !== undefined && !this.contexts.madeVerifying;
    return { socket: this.dial(host, port, reader, withoutCa ? this.session : undefined), withoutCa };
  }

  /**
   * The connection again with the CAs, after a handshake without them
   * failed. It makes the context with the CAs, so later connections of this
   * thread take them from the start (`connect`).
   */
  dialWithCa(host: string, port: number, reader: SocketReader): TLSSocket {
    return this.dial(host, port, reader);
  }

  /**
   * A TLS socket connecting to `host` (an address) on `port`; "secureConnect"
   * says when it is ready. Its reads go to `reader`, or to whoever
   * `adoptReads` names later; never to "data" events. `resumeWithoutCa`: a
   * verified session (of an earlier run, or of this one) to resume with no
   * CA (see the class comment).
   */
  private dial(host: string, port: number, reader?: SocketReader, resumeWithoutCa?: Buffer): TLSSocket {
    const route: ReadRoute = { reader };
    // node:tls is loaded at the first https connect, not at start-up (see cli/options.ts).
    // `onread` is a documented tls.connect option that @types/node leaves out of ConnectionOptions.
    const options: ConnectionOptions & { onread: OnReadOpts } = {
      host,
      port,
      servername: isIP(this.serverName) ? undefined : this.serverName,
      secureContext: resumeWithoutCa ? this.contexts.resumeOnly() : this.contexts.verifying(),
      rejectUnauthorized: this.verify,
      ALPNProtocols: ["http/1.1"],
      session: resumeWithoutCa ?? this.session,
      onread: {
        // Bytes before anyone reads (none should come: the server speaks when asked) go to a scratch buffer of the socket's own.
        buffer: () => route.reader?.nextBuffer() ?? (route.unclaimed ??= Buffer.alloc(1024)),
        callback: (n: number, buf: Uint8Array) => {
          if (route.reader) return route.reader.onRead(n, buf);
          socket.destroy(); // bytes nobody asked for: the connection is out of step
          return false;
        },
      },
    };
    const socket = process.getBuiltinModule("node:tls").connect(options);
    (socket as Routed)[READ_ROUTE] = route;
    socket.setNoDelay(true);
    // TLS 1.3 tickets come after the handshake, possibly several: the last one serves the next connect.
    socket.on("session", (session: Buffer) => {
      this.session = session;
      this.keep(host, port, socket, session);
    });
    return socket;
  }

  /**
   * A connect for a probe (net/pools/connect-probe.ts): calls back once the
   * handshake is done, or with the error (UND_ERR_CONNECT_TIMEOUT after
   * `timeoutMs`). The probe resumes a kept session if there is one.
   */
  probe(host: string, port: number, timeoutMs: number, callback: ConnectCallback): DialHandle {
    const kept = this.session === undefined ? this.sessions?.load(this.serverName, host, port) : undefined;
    if (!kept) return this.connectOnce(host, port, timeoutMs, undefined, callback);
    // A session kept a moment ago need not be written again (see TLS_SESSION_REFRESH_MS).
    if (kept.ageMs < TLS_SESSION_REFRESH_MS) this.kept = true;
    // Set before the dial: the server's newer ticket may arrive before "secureConnect" is handled.
    this.keptVerifiedAt = kept.verifiedAt;
    const deadline = Date.now() + timeoutMs;
    let current: TLSSocket;
    let dropped = false;
    current = this.connectOnce(host, port, timeoutMs, kept.session, (err, socket) => {
      if (!err) {
        // The next connects resume it too, unless the server gave a newer ticket (not every server gives one on a resumed connection).
        this.session ??= kept.session;
        callback(null, socket);
        return;
      }
      this.sessions?.forget(this.serverName, host, port);
      this.kept = false;
      this.keptVerifiedAt = undefined;
      // Dialled again, once, within the probe's one deadline, with the CAs and no session: unless the address itself failed.
      if (dropped || addressFailed(err)) callback(err, null);
      else current = this.connectOnce(host, port, Math.max(1, deadline - Date.now()), undefined, callback);
    });
    return {
      destroy: () => {
        dropped = true;
        current.destroy();
      },
    };
  }

  private connectOnce(host: string, port: number, timeoutMs: number, kept: Buffer | undefined, callback: ConnectCallback): TLSSocket {
    const socket = this.dial(host, port, undefined, kept);
    const timer = setTimeout(() => socket.destroy(codedError("UND_ERR_CONNECT_TIMEOUT", `connect to ${host} timed out`)), timeoutMs);
    const onError = (err: Error): void => callback(err, null);
    socket.once("error", onError);
    socket.once("close", () => clearTimeout(timer));
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      socket.removeListener("error", onError);
      callback(null, socket);
    });
    return socket;
  }

  /**
   * Keeps the first TLS 1.3 session of a verified connection for later
   * runs. One from a resumed connection keeps the time its line's full
   * handshake checked the certificate, so renewals never stretch the age limit.
   */
  private keep(host: string, port: number, socket: TLSSocket, session: Buffer): void {
    if (this.kept || !this.sessions || !socket.authorized || socket.getProtocol() !== "TLSv1.3") return;
    this.kept = true;
    this.sessions.save(this.serverName, host, port, session, socket.isSessionReused() ? this.keptVerifiedAt : undefined);
  }
}

/**
 * A connect that failed for the address, not for the session offered: no
 * answer in time, refused, unreachable. Anything else (above all, the
 * certificate refused by a context with no CA, which is what a server that
 * did not resume the session leads to; or a reset by a server that chokes
 * on the session) is worth one more dial with the CAs.
 */
export function addressFailed(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  return ["UND_ERR_CONNECT_TIMEOUT", "ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ETIMEDOUT"].includes(code);
}

/** How a connection's handshake went, for --debug: "TLSv1.3, session resumed, ALPN http/1.1". */
export function tlsSummary(socket: TLSSocket): string {
  const resumed = socket.isSessionReused() ? "session resumed" : "full handshake";
  return `${socket.getProtocol() ?? "?"}, ${resumed}, ALPN ${socket.alpnProtocol || "none"}`;
}
