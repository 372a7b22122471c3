// TLS connects to one front-end address for s3x's own HTTP/1.1 client and its probes: options and session resumption.
import { isIP, type OnReadOpts, type Socket } from "node:net";
import type { ConnectionOptions, TLSSocket } from "node:tls";
import { codedError } from "./failures.js";
import type { ConnectCallback } from "./pools/connect-probe.js";
import type { TlsSettings } from "./net-options.js";

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
 */
export class TlsDialer {
  /** The last session ticket the server gave on any connection to this address. */
  private session: Buffer | undefined;

  constructor(
    private readonly serverName: string,
    private readonly settings: TlsSettings | undefined,
  ) {}

  /**
   * A TLS socket connecting to `host` (an address) on `port`; "secureConnect"
   * says when it is ready. Its reads go to `reader`, or to whoever
   * `adoptReads` names later; never to "data" events.
   */
  dial(host: string, port: number, reader?: SocketReader): TLSSocket {
    const route: ReadRoute = { reader };
    // node:tls is loaded at the first https connect, not at start-up (see cli/options.ts).
    // `onread` is a documented tls.connect option that @types/node leaves out of ConnectionOptions.
    const options: ConnectionOptions & { onread: OnReadOpts } = {
      host,
      port,
      servername: isIP(this.serverName) ? undefined : this.serverName,
      secureContext: this.settings?.secureContext,
      rejectUnauthorized: this.settings?.verify ?? true,
      ALPNProtocols: ["http/1.1"],
      session: this.session,
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
    });
    return socket;
  }

  /**
   * A connect for a probe (net/pools/connect-probe.ts): calls back once the
   * handshake is done, or with the error (UND_ERR_CONNECT_TIMEOUT after `timeoutMs`).
   */
  probe(host: string, port: number, timeoutMs: number, callback: ConnectCallback): TLSSocket {
    const socket = this.dial(host, port);
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
}

/** How a connection's handshake went, for --debug: "TLSv1.3, session resumed, ALPN http/1.1". */
export function tlsSummary(socket: TLSSocket): string {
  const resumed = socket.isSessionReused() ? "session resumed" : "full handshake";
  return `${socket.getProtocol() ?? "?"}, ${resumed}, ALPN ${socket.alpnProtocol || "none"}`;
}
