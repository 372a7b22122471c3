import type { Server } from "node:net";
import { AddressResolver } from "../../src/net/resolver.js";
import { HostAddresses, DEFAULT_NET_OPTIONS } from "../../src/net/pools.js";
import { RawPools } from "../../src/net/http1/pool.js";
import type { RawTarget } from "../../src/net/http1/request.js";

/**
 * s3x's own HTTP/1.1 client aimed at one loopback address (a host "s3.test"
 * pinned to 127.0.0.1), made afresh for each test of the calling `describe`
 * and closed after it, with the test's server (`server`).
 */
export interface LoopbackClient {
  host: HostAddresses;
  /** The default timeouts (a 30 s first byte: on a starved machine this process's own test server can take over a second to answer a 3 MiB PUT); a test may replace them. */
  pools: RawPools;
  server: Server | undefined;
  /** Where `rawRequest` sends to reach the server listening on `port`. */
  target(port: number): RawTarget;
}

export function loopbackClient(): LoopbackClient {
  const client: LoopbackClient = {
    host: undefined as unknown as HostAddresses,
    pools: undefined as unknown as RawPools,
    server: undefined,
    target(port) {
      return { pools: client.pools, address: client.host.addresses[0], host: client.host, port };
    },
  };
  beforeEach(() => {
    client.host = new HostAddresses("s3.test", "http:", 1, DEFAULT_NET_OPTIONS, new AddressResolver(), { addresses: ["127.0.0.1"], ttlMs: Infinity, source: "pinned" });
    client.pools = new RawPools(DEFAULT_NET_OPTIONS);
  });
  afterEach(async () => {
    client.pools.close();
    await client.host.close();
    const server = client.server;
    client.server = undefined;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });
  return client;
}
