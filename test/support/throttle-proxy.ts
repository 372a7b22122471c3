import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A real TCP proxy in front of the S3 server that limits the rate of the
 * server's replies and can reset a connection after some bytes. Used where a
 * test needs a transfer slow enough to interrupt, or a connection that dies
 * mid-body, without root (the network-namespace lab covers the rest).
 * It is a network fault injector, not a fake S3: every byte comes from the
 * real server.
 */
export interface ThrottleProxy {
  endpoint: string;
  port: number;
  /** Bytes per second per connection and direction (0 = unlimited). */
  setRate(bytesPerSecond: number): void;
  /** Reset the next `count` connections after they have relayed `afterBytes` reply bytes. */
  resetNext(count: number, afterBytes: number): void;
  resets: number;
  close(): Promise<void>;
}

export async function startThrottleProxy(targetHost: string, targetPort: number, bytesPerSecond = 0): Promise<ThrottleProxy> {
  let rate = bytesPerSecond;
  let resetBudget = 0;
  let resetAfter = 0;
  const sockets = new Set<Socket>();
  const state = { resets: 0 };

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const resetAt = resetBudget > 0 ? (resetBudget--, resetAfter) : -1;
    let relayed = 0;
    // Both directions are rate-limited (uploads and downloads alike); only
    // reply bytes count towards a reset.
    const relay = (from: Socket, to: Socket, isReply: boolean): void => {
      from.on("data", (chunk: Buffer) => {
        if (isReply) {
          relayed += chunk.length;
          if (resetAt >= 0 && relayed > resetAt) {
            state.resets++;
            client.resetAndDestroy();
            upstream.destroy();
            return;
          }
        }
        const ok = to.write(chunk);
        if (rate > 0) {
          from.pause();
          setTimeout(() => from.resume(), (chunk.length / rate) * 1000);
        } else if (!ok) {
          from.pause();
          to.once("drain", () => from.resume());
        }
      });
    };
    relay(client, upstream, false);
    relay(upstream, client, true);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    upstream.on("end", () => client.end());
    upstream.on("error", close);
    client.on("error", close);
    client.on("close", close);
    upstream.on("close", () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    setRate: (r) => (rate = r),
    resetNext: (count, afterBytes) => {
      resetBudget = count;
      resetAfter = afterBytes;
    },
    get resets() {
      return state.resets;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
