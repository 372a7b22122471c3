import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A real TCP proxy in front of the S3 server that limits the rate of the
 * server's replies, can reset a connection after some bytes, and can hold
 * every chunk for a while each way (latency: this kernel has no netem), and
 * can hold a transfer at a byte count until the test releases it.
 * Used where a test needs a transfer slow enough to interrupt, a connection
 * that dies mid-body, or a server far away, without root (the
 * network-namespace lab covers the rest).
 * It is a network fault injector, not a fake S3: every byte comes from the
 * real server.
 */
export interface ThrottleProxy {
  endpoint: string;
  port: number;
  /** Bytes per second per connection and direction (0 = unlimited). */
  setRate(bytesPerSecond: number): void;
  /** Holds every chunk `ms` before relaying it, each way: a round trip takes 2 × ms longer. */
  setDelay(ms: number): void;
  /** Reset the next `count` connections after they have relayed `afterBytes` reply bytes. */
  resetNext(count: number, afterBytes: number): void;
  /**
   * Once `bytes` more have been relayed (both directions, every connection),
   * holds every further chunk until release(): a transfer that cannot get
   * past a point, however fast or slow the machine runs, so a test can act
   * on it (interrupt it, replace its object) before it could finish.
   */
  holdAfter(bytes: number): void;
  /** Relays what was held, and everything from now on. */
  release(): void;
  /** Whether holdAfter's bytes have all been relayed (the transfer is held now). */
  readonly holding: boolean;
  /** Resolves once a chunk is held back: the transfer is stopped at holdAfter's point. */
  whenHolding(): Promise<void>;
  resets: number;
  /** Connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

export async function startThrottleProxy(targetHost: string, targetPort: number, bytesPerSecond = 0): Promise<ThrottleProxy> {
  let rate = bytesPerSecond;
  let delayMs = 0;
  let resetBudget = 0;
  let resetAfter = 0;
  const sockets = new Set<Socket>();
  const state = { resets: 0, connections: 0 };
  /** Bytes still to relay before holding (undefined: never hold). */
  let holdBudget: number | undefined;
  const held: (() => void)[] = [];
  const holdWaiters: (() => void)[] = [];

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    state.connections++;
    sockets.add(client);
    sockets.add(upstream);
    const resetAt = resetBudget > 0 ? (resetBudget--, resetAfter) : -1;
    let relayed = 0;
    // Both directions are rate-limited (uploads and downloads alike); only
    // reply bytes count towards a reset.
    const relay = (from: Socket, to: Socket, isReply: boolean): void => {
      const onData = (chunk: Buffer): void => {
        if (holdBudget !== undefined) {
          if (holdBudget <= 0) {
            from.pause();
            held.push(() => {
              // resume() only schedules the next read: this chunk still goes first.
              from.resume();
              onData(chunk);
            });
            for (const wake of holdWaiters.splice(0)) wake();
            return;
          }
          holdBudget -= chunk.length;
        }
        if (isReply) {
          relayed += chunk.length;
          if (resetAt >= 0 && relayed > resetAt) {
            state.resets++;
            client.resetAndDestroy();
            upstream.destroy();
            return;
          }
        }
        if (delayMs > 0) {
          // Every chunk waits the same time, so they leave in the order they came.
          setTimeout(() => to.destroyed || to.write(chunk), delayMs);
          return;
        }
        const ok = to.write(chunk);
        if (rate > 0) {
          from.pause();
          setTimeout(() => from.resume(), (chunk.length / rate) * 1000);
        } else if (!ok) {
          from.pause();
          to.once("drain", () => from.resume());
        }
      };
      from.on("data", onData);
    };
    relay(client, upstream, false);
    relay(upstream, client, true);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    // With a delay, the end follows the chunks still held back.
    const endClient = (): void => {
      if (delayMs > 0) setTimeout(() => client.end(), delayMs);
      else client.end();
    };
    upstream.on("end", endClient);
    upstream.on("error", close);
    client.on("error", close);
    client.on("close", close);
    upstream.on("close", endClient);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    setRate: (r) => (rate = r),
    setDelay: (ms) => (delayMs = ms),
    resetNext: (count, afterBytes) => {
      resetBudget = count;
      resetAfter = afterBytes;
    },
    holdAfter: (bytes) => (holdBudget = bytes),
    release: () => {
      holdBudget = undefined;
      for (const relayHeld of held.splice(0)) relayHeld();
    },
    get resets() {
      return state.resets;
    },
    get connections() {
      return state.connections;
    },
    get holding() {
      return holdBudget !== undefined && holdBudget <= 0;
    },
    whenHolding: () => (held.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => holdWaiters.push(resolve))),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
