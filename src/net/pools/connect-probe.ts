// A connection opened ahead of any request, kept for the first connect of the address's pool.
import { connect, isIP, type Socket } from "node:net";
import type { buildConnector } from "undici";
import { codedError } from "../failures.js";

/** Dials `target` and reports through `callback`, in the shape of undici's connector. */
export type Dial = (target: buildConnector.Options, callback: buildConnector.Callback) => unknown;

/**
 * A plain TCP connect in the shape of undici's connector (a timeout fails
 * with undici's UND_ERR_CONNECT_TIMEOUT): what a probe over plain HTTP needs,
 * without loading undici.
 */
export function connectPlain(options: buildConnector.Options, timeoutMs: number, callback: buildConnector.Callback): Socket {
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
 * first connect of the address's pool, so that connect is not paid twice.
 */
export class ConnectProbe {
  /** The probe's connected socket, waiting for the pool's first connect. */
  private spare: Socket | undefined;
  /** A probe still connecting (destroyed by `drop`). */
  private probing: Socket | undefined;

  /** Whether a probe is connecting, or its socket is waiting. */
  get busy(): boolean {
    return this.probing !== undefined || this.spare !== undefined;
  }

  /**
   * Dials `target`. `settled` hears the outcome first; a socket that
   * connected is then kept as the spare if `stillWanted()`, else closed.
   */
  start(target: buildConnector.Options, dial: Dial, settled: (err: Error | null) => void, stillWanted: () => boolean): void {
    let finished = false;
    const onConnect: buildConnector.Callback = (err, connected) => {
      finished = true;
      this.probing = undefined;
      settled(err);
      if (err || !connected) return;
      if (!stillWanted()) {
        connected.destroy();
        return;
      }
      this.spare = connected as Socket;
      // An idle spare that the server closes, or that fails, is simply dropped.
      const drop = (): void => {
        if (this.spare === connected) this.spare = undefined;
      };
      connected.once("close", drop).on("error", drop);
    };
    // undici's connector returns the socket it dials (its typings say void):
    // kept so that drop() can end a connect stuck on a black hole.
    const socket = dial(target, onConnect);
    if (!finished) this.probing = (socket as Socket | undefined) ?? undefined;
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
