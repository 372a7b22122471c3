// A connection opened ahead of any request, kept for the first connection to the address.
import { connect, isIP, type Socket } from "node:net";
import { codedError } from "../failures.js";

/** Where a probe dials. */
export interface ProbeTarget {
  hostname: string;
  port: string;
}

/** Hears how a connect ended: an error, or the connected socket. */
export type ConnectCallback = (err: Error | null, socket: Socket | null) => void;

/** Dials `target` and reports through `callback`; returns the socket being dialled. */
/** What a probe can cancel: its connect (a TLS probe may dial twice, see TlsDialer.probe). */
export interface DialHandle {
  destroy(): void;
}

export type Dial = (target: ProbeTarget, callback: ConnectCallback) => DialHandle;

/**
 * A plain TCP connect; a timeout fails with UND_ERR_CONNECT_TIMEOUT, the
 * code the failure classifier knows (the name undici gave it).
 */
export function connectPlain(options: ProbeTarget, timeoutMs: number, callback: ConnectCallback): Socket {
  const host = options.hostname;
  const socket = connect({ host, port: Number(options.port), family: isIP(host) || undefined, noDelay: true });
  const timer = setTimeout(() => socket.destroy(codedError("UND_ERR_CONNECT_TIMEOUT", `connect to ${host} timed out`)), timeoutMs);
  const onError = (err: Error): void => callback(err, null);
  socket.once("error", onError);
  socket.once("close", () => clearTimeout(timer));
  socket.once("connect", () => {
    clearTimeout(timer);
    socket.removeListener("error", onError);
    callback(null, socket);
  });
  return socket;
}

/**
 * One address's probe: a connect made ahead of any request (see
 * HostAddresses.firstContact) whose socket then waits, as a spare, for the
 * first connection to the address over TLS, so its handshake is not paid twice.
 */
export class ConnectProbe {
  /** The probe's connected socket, waiting for the pool's first connect. */
  private spare: Socket | undefined;
  /** A probe still connecting (destroyed by `drop`). */
  private probing: DialHandle | undefined;

  /** Whether a probe is connecting, or its socket is waiting. */
  get busy(): boolean {
    return this.probing !== undefined || this.spare !== undefined;
  }

  /**
   * Dials `target`. `settled` hears the outcome first; a socket that
   * connected is then kept as the spare if `stillWanted()`, else closed.
   */
  start(target: ProbeTarget, dial: Dial, settled: (err: Error | null) => void, stillWanted: () => boolean): void {
    let finished = false;
    const onConnect: ConnectCallback = (err, connected) => {
      finished = true;
      this.probing = undefined;
      settled(err);
      if (err || !connected) return;
      if (!stillWanted()) {
        connected.destroy();
        return;
      }
      this.spare = connected;
      // An idle spare that the server closes, or that fails, is simply dropped.
      const drop = (): void => {
        if (this.spare === connected) this.spare = undefined;
      };
      connected.once("close", drop).on("error", drop);
    };
    // Kept so that drop() can end a connect stuck on a black hole.
    const socket = dial(target, onConnect);
    if (!finished) this.probing = socket;
  }

  /** The spare socket if it is still open; from then on it is the caller's. */
  take(): Socket | undefined {
    const spare = this.spare;
    this.spare = undefined;
    if (!spare || spare.destroyed || spare.readyState !== "open") return undefined;
    spare.removeAllListeners("close");
    spare.removeAllListeners("error");
    return spare;
  }

  /** Closes both sockets: a pending connect to a black hole must not keep the process alive. */
  drop(): void {
    this.probing?.destroy();
    this.probing = undefined;
    this.spare?.destroy();
    this.spare = undefined;
  }
}
