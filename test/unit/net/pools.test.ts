import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AddressResolver } from "../../../src/net/resolver.js";
import { DEFAULT_NET_OPTIONS } from "../../../src/net/net-options.js";
import { HostAddresses } from "../../../src/net/pools/host-addresses.js";
import { RawPools } from "../../../src/net/http1/pool.js";
import { rawRequest } from "../../../src/net/http1/request.js";

function hostWith(addresses: string[]): HostAddresses {
  return new HostAddresses("s3.example", "http:", 9, DEFAULT_NET_OPTIONS, new AddressResolver(), { addresses, ttlMs: Infinity, source: "pinned" });
}

describe("net/pools: choosing an address", () => {
  let host: HostAddresses;
  afterEach(async () => {
    await host?.close();
  });

  it("round-robins over equally loaded addresses", () => {
    host = hostWith(["127.0.0.2", "127.0.0.3", "127.0.0.4"]);
    const picked = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const a = host.pick();
      a.inFlight++;
      picked.add(a.address);
    }
    assert.equal(picked.size, 3);
  });

  it("prefers the least loaded address", () => {
    host = hostWith(["127.0.0.2", "127.0.0.3"]);
    host.addresses[0].inFlight = 5;
    host.addresses[1].inFlight = 2;
    assert.equal(host.pick().address, "127.0.0.3");
  });

  it("avoids bad addresses, and addresses a request already failed on, while others exist", () => {
    host = hostWith(["127.0.0.2", "127.0.0.3", "127.0.0.4"]);
    host.markBad(host.addresses[0], "connection refused");
    for (let i = 0; i < 10; i++) {
      const a = host.pick(new Set(["127.0.0.3"]));
      assert.equal(a.address, "127.0.0.4");
    }
    assert.equal(host.stats()[0].state, "bad");
    assert.equal(host.stats()[0].lastProblem, "connection refused");
  });

  it("uses bad addresses at once when no good one is left", () => {
    host = hostWith(["127.0.0.2", "127.0.0.3"]);
    host.markBad(host.addresses[0], "connection refused");
    host.markBad(host.addresses[1], "connect timed out");
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const a = host.pick();
      a.inFlight++;
      seen.add(a.address);
    }
    assert.equal(seen.size, 2);
  });

  it("a burst of 5xx puts an address on the bad list; a success clears it", () => {
    host = hostWith(["127.0.0.2", "127.0.0.3"]);
    const a = host.addresses[0];
    for (let i = 0; i < 4; i++) host.noteServerError(a, 503);
    assert.equal(a.isBad(), false);
    host.noteServerError(a, 503);
    assert.equal(a.isBad(), true);
    a.noteSuccess();
    assert.equal(a.isBad(), false);
  });

  it("tells onAddressBad what its own requests found bad, once, and not marks from another thread (one view across worker threads)", () => {
    const told: string[] = [];
    const options = { ...DEFAULT_NET_OPTIONS, onAddressBad: (address: string, problem: string) => told.push(`${address}: ${problem}`) };
    host = new HostAddresses("s3.example", "http:", 9, options, new AddressResolver(), { addresses: ["127.0.0.2", "127.0.0.3", "127.0.0.4"], ttlMs: Infinity, source: "pinned" });
    const [a, b, c] = host.addresses;
    host.markBad(a!, "connection reset");
    host.markBad(a!, "connection reset"); // already bad: not told again
    for (let i = 0; i < 5; i++) host.noteServerError(b!, 503);
    host.markBad(c!, "reset, seen by another thread", false);
    assert.deepEqual(told, ["127.0.0.2: connection reset", "127.0.0.3: HTTP 503 burst"]);
    assert.equal(c!.isBad(), true, "another thread's mark is followed");
  });

  it("the bad-list cooldown doubles with failures in a row", () => {
    host = hostWith(["127.0.0.2"]);
    const a = host.addresses[0];
    // A frozen clock: the cooldowns are compared exactly, however long the calls take.
    const realNow = Date.now;
    const t0 = realNow();
    Date.now = () => t0;
    try {
      a.markBad("x");
      const first = a.badUntil - t0;
      a.markBad("x");
      const second = a.badUntil - t0;
      assert.ok(first > 0);
      assert.equal(second, 2 * first);
    } finally {
      Date.now = realNow;
    }
  });
});

describe("net/pools: first contact (real sockets on loopback)", () => {
  let server: Server;
  let port: number;
  let host: HostAddresses | undefined;
  before(async () => {
    // Listens on 127.0.0.1 only: 127.0.0.2 on the same port refuses.
    server = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  it("sends the first request to an address that connected (a plain-HTTP probe's socket is closed: s3x's client reads only sockets it opens)", async () => {
    host = new HostAddresses("s3.example", "http:", port, DEFAULT_NET_OPTIONS, new AddressResolver(), { addresses: ["127.0.0.2", "127.0.0.1"], ttlMs: Infinity, source: "pinned" });
    const started = Date.now();
    await host.firstContact();
    const first = host.pick();
    assert.equal(first.address, "127.0.0.1", "the refusing address, first in the list, is passed over");
    const pools = new RawPools(DEFAULT_NET_OPTIONS);
    try {
      const response = await rawRequest({ pools, address: first, host, port }, { method: "GET", path: "/", headers: { host: `s3.example:${port}` }, body: undefined }, { expectedBytes: 0 });
      const chunks: Buffer[] = [];
      for await (const chunk of response.body) chunks.push(chunk as Buffer);
      assert.equal(Buffer.concat(chunks).toString(), "ok");
    } finally {
      pools.close();
    }
    // Refusals are answered at once: no wait for a connect timeout, however loaded the machine.
    assert.ok(Date.now() - started < DEFAULT_NET_OPTIONS.connectTimeoutMs, `first request took ${Date.now() - started} ms`);
    const refused = host.stats().find((s) => s.address === "127.0.0.2")!;
    assert.equal(refused.reachability, "down");
    assert.equal(refused.state, "bad");
  });

  it("passes over an address whose connect lags past the happy-eyeballs delay", () => {
    host = new HostAddresses("s3.example", "http:", port, DEFAULT_NET_OPTIONS, new AddressResolver(), { addresses: ["127.0.0.2", "127.0.0.3"], ttlMs: Infinity, source: "pinned" });
    const [lagging, other] = host.addresses;
    lagging.reachability = "connecting";
    lagging.connectingSince = Date.now() - 300;
    lagging.lastPickedAt = -1; // first in line on every other count
    for (let i = 0; i < 4; i++) assert.equal(host.pick().address, other.address);
    lagging.connectingSince = Date.now() - 100; // within the delay: still a candidate
    lagging.lastPickedAt = -1;
    assert.equal(host.pick().address, lagging.address);
  });
});
