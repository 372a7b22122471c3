// TLS connects to one front-end address for s3x's own HTTP/1.1 client and its probes: options and session resumption.
import { isIP, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { buildConnector } from "undici";
import { codedError } from "./failures.js";
import type { TlsSettings } from "./net-options.js";

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

  /** A TLS socket connecting to `host` (an address) on `port`; "secureConnect" says when it is ready. */
  dial(host: string, port: number): TLSSocket {
    // node:tls is loaded at the first https connect, not at start-up (see cli/options.ts).
    const socket = process.getBuiltinModule("node:tls").connect({
      host,
      port,
      servername: isIP(this.serverName) ? undefined : this.serverName,
      secureContext: this.settings?.secureContext,
      rejectUnauthorized: this.settings?.verify ?? true,
      ALPNProtocols: ["http/1.1"],
      session: this.session,
    });
    socket.setNoDelay(true);
    // TLS 1.3 tickets come after the handshake, possibly several: the last one serves the next connect.
    socket.on("session", (session: Buffer) => {
      this.session = session;
    });
    return socket;
  }

  /**
   * A connect for a probe, in the shape of undici's connector (see
   * net/pools/connect-probe.ts): calls back once the handshake is done, or
   * with the error (UND_ERR_CONNECT_TIMEOUT after `timeoutMs`).
   */
  probe(host: string, port: number, timeoutMs: number, callback: buildConnector.Callback): Socket {
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
