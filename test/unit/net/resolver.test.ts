import assert from "node:assert/strict";
import { AddressResolver, parseDnsServers, parsePinnedAddresses, refreshDelay } from "../../../src/net/resolver.js";
import { DEFAULT_NET_OPTIONS } from "../../../src/net/net-options.js";
import { HostDirectory } from "../../../src/net/pools/host-directory.js";
import { startDnsServer, type TestDnsServer } from "../../support/dns-server.js";
import { createServer, type Server, type Socket } from "node:net";

// Names under .invalid can never exist in public DNS; they only go to our server anyway.
const NAME = "s3.fanout.invalid";

describe("net/resolver (real DNS server on loopback)", () => {
  let dns: TestDnsServer;
  /**
   * A TCP listener on every loopback address: s3x connects to each
   * address at first contact (and marks one that refuses as bad), so the
   * addresses these tests resolve to must accept connections.
   */
  let listener: Server;
  let port: number;
  const sockets = new Set<Socket>();

  before(async () => {
    dns = await startDnsServer();
    listener = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket)).on("error", () => undefined);
    });
    await new Promise<void>((resolve) => listener.listen(0, "0.0.0.0", resolve));
    port = (listener.address() as { port: number }).port;
  });
  after(async () => {
    await dns.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => listener.close(resolve));
  });

  it("returns every A record with the smallest TTL", async () => {
    dns.setAnswer(NAME, ["127.0.0.2", "127.0.0.3", "127.0.0.4"], 7);
    const resolver = new AddressResolver({ dnsServers: [dns.server] });
    const answer = await resolver.resolve(NAME);
    assert.deepEqual([...answer.addresses].sort(), ["127.0.0.2", "127.0.0.3", "127.0.0.4"]);
    assert.equal(answer.ttlMs, 7000);
    assert.equal(answer.source, "dns");
  });

  it("prefers IPv4 but uses AAAA records when there is no A record", async () => {
    dns.setAnswer("v6only.fanout.invalid", ["::1", "::2"], 3);
    const resolver = new AddressResolver({ dnsServers: [dns.server] });
    const answer = await resolver.resolve("v6only.fanout.invalid");
    assert.deepEqual([...answer.addresses].sort(), ["::1", "::2"]);
    dns.setAnswer("both.fanout.invalid", ["127.0.0.5", "::5"], 3);
    assert.deepEqual((await resolver.resolve("both.fanout.invalid")).addresses, ["127.0.0.5"]);
  });

  it("fails clearly for a name the named DNS server does not know (no fallback to the system resolver)", async () => {
    const resolver = new AddressResolver({ dnsServers: [dns.server] });
    await assert.rejects(resolver.resolve("unknown.fanout.invalid"), (err: Error & { code?: string }) => {
      assert.equal(err.code, "ENOTFOUND");
      assert.match(err.message, /unknown\.fanout\.invalid does not resolve/);
      return true;
    });
  });

  it("pinned addresses and IP literals need no DNS and never change", async () => {
    const resolver = new AddressResolver({ dnsServers: [dns.server], pinned: parsePinnedAddresses(["S3.Example.com=127.0.0.7,127.0.0.8"]) });
    const before = dns.queries("s3.example.com");
    assert.deepEqual((await resolver.resolve("s3.example.com")).addresses, ["127.0.0.7", "127.0.0.8"]);
    assert.equal(dns.queries("s3.example.com"), before);
    assert.ok(resolver.isStatic("s3.example.com"));
    assert.ok(resolver.isStatic("127.0.0.1"));
    assert.equal(resolver.isStatic(NAME), false);
  });

  it("re-resolves in the background: new addresses join, vanished ones retire", async function () {
    this.timeout(10_000);
    const name = "moving.fanout.invalid";
    dns.setAnswer(name, ["127.0.0.2", "127.0.0.3"], 1);
    const hosts = new HostDirectory({ ...DEFAULT_NET_OPTIONS, dnsServers: [dns.server] });
    try {
      const host = await hosts.forOrigin("http:", name, port);
      assert.deepEqual(host.addresses.map((a) => a.address).sort(), ["127.0.0.2", "127.0.0.3"]);
      dns.setAnswer(name, ["127.0.0.3", "127.0.0.4"], 1);
      host.pick(); // in use: keeps re-resolving
      const deadline = Date.now() + 5_000;
      while (!host.addresses.some((a) => a.address === "127.0.0.4") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const states = Object.fromEntries(host.stats().map((s) => [s.address, s.state]));
      assert.deepEqual(states, { "127.0.0.2": "retired", "127.0.0.3": "healthy", "127.0.0.4": "healthy" });
      // A retired address never gets a new request.
      for (let i = 0; i < 20; i++) assert.notEqual(host.pick().address, "127.0.0.2");
    } finally {
      await hosts.close();
    }
  });

  it("keeps its addresses when DNS stops answering", async function () {
    this.timeout(10_000);
    const name = "flaky.fanout.invalid";
    dns.setAnswer(name, ["127.0.0.2"], 1);
    const hosts = new HostDirectory({ ...DEFAULT_NET_OPTIONS, dnsServers: [dns.server] });
    try {
      const host = await hosts.forOrigin("http:", name, port);
      dns.setAnswer(name, [], 1);
      const queries = dns.queries(name);
      host.pick();
      const deadline = Date.now() + 5_000;
      while (dns.queries(name) === queries && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.ok(dns.queries(name) > queries, "re-resolved");
      assert.deepEqual(host.stats().map((s) => [s.address, s.state]), [["127.0.0.2", "healthy"]]);
    } finally {
      await hosts.close();
    }
  });

  it("opens nothing for a request made after close (no socket left to keep the process alive)", async () => {
    const hosts = new HostDirectory({ ...DEFAULT_NET_OPTIONS, dnsServers: [dns.server] });
    await hosts.close();
    await assert.rejects(hosts.forOrigin("http:", "127.0.0.1", port), { code: "S3X_CLIENT_CLOSED" });
    assert.deepEqual(await hosts.stats(), []);
  });

  it("parses --resolve and --dns-server values", () => {
    assert.deepEqual([...parsePinnedAddresses(["a.example=127.0.0.2,127.0.0.3", "b.example:443:[::1]"])], [
      ["a.example", ["127.0.0.2", "127.0.0.3"]],
      ["b.example", ["::1"]],
    ]);
    assert.throws(() => parsePinnedAddresses(["a.example=not-an-ip"]), /not an IP address/);
    assert.throws(() => parsePinnedAddresses(["a.example"]), /HOST=IP/);
    assert.deepEqual(parseDnsServers(["127.0.0.1:5353", "10.0.0.1", "[::1]:53"]), ["127.0.0.1:5353", "10.0.0.1", "[::1]:53"]);
    assert.throws(() => parseDnsServers(["dns.example:53"]), /IP or IP:PORT/);
    assert.throws(() => parseDnsServers(["127.0.0.1:99999"]), /bad port/);
  });

  it("re-resolves no faster than every second and no slower than every five", () => {
    assert.equal(refreshDelay(0), 1000);
    assert.equal(refreshDelay(3000), 3000);
    assert.equal(refreshDelay(300_000), 5000);
  });
});
