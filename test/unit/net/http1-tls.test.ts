import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { connect as netConnect, createServer as createNetServer, type AddressInfo, type Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createServer, type SecureContext, type Server, type TLSSocket } from "node:tls";
import { AddressResolver } from "../../../src/net/resolver.js";
import { HostAddresses, DEFAULT_NET_OPTIONS, FileTlsSessionStore, SecureContexts, type NetOptions } from "../../../src/net/pools.js";
import { RawPools } from "../../../src/net/http1/pool.js";
import { TLS_SESSION_REFRESH_MS } from "../../../src/net/tls-session-store.js";
import { rawRequest } from "../../../src/net/http1/request.js";
import { ResponseBody } from "../../../src/net/response-body.js";
import { readRequests } from "../../support/request-reader.js";
import { makeCertificate } from "../../support/certificate.js";

/**
 * s3x's own HTTP/1.1 client over TLS, against a real `tls.createServer` on
 * loopback with a throw-away certificate (for 127.0.0.1 and localhost)
 * that answers with hand-written HTTP/1.1: part buffers filled from
 * decrypted chunks, slices and backpressure, uploads, session resumption,
 * the probe's socket taken over, and certificate checks.
 */
interface TlsServer {
  server: Server;
  port: number;
  /** Per connection, in order: whether its handshake resumed a session. */
  resumed: boolean[];
  /** Request bodies received, in order. */
  bodies: Buffer[];
  /** Requests received (heads), of any method. */
  requests: number;
  /** Its connections' sockets, to cut them all. */
  sockets: Set<TLSSocket>;
}

const MiB = 1024 * 1024;

/** Bytes no two positions share often, so a piece placed twice or out of order shows. */
function patterned(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >>> 8) * 13) & 0xff;
  return bytes;
}

const payload = patterned(3 * MiB + 5);

describe("net/http1 over TLS: s3x's own HTTP/1.1 client on tls.connect sockets", function () {
  let dir: string;
  let cert: { certFile: string; keyFile: string };
  let server: TlsServer | undefined;
  let host: HostAddresses | undefined;
  let pools: RawPools | undefined;

  before(function () {
    this.timeout(30_000);
    dir = mkdtempSync(join(tmpdir(), "s3x-http1-tls-"));
    cert = makeCertificate(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    pools?.close();
    await host?.close();
    await new Promise<void>((resolve) => (server ? server.server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** Answers GETs with `body` (head and body in one write), and PUTs by keeping their bodies and answering 200. */
  async function serve(body: Buffer, port = 0, certificate = cert): Promise<TlsServer> {
    const s: TlsServer = { server: undefined as unknown as Server, port: 0, resumed: [], bodies: [], requests: 0, sockets: new Set() };
    s.server = createServer({ cert: readFileSync(certificate.certFile), key: readFileSync(certificate.keyFile), ALPNProtocols: ["http/1.1"] }, (socket: TLSSocket) => {
      s.resumed.push(socket.isSessionReused());
      s.sockets.add(socket);
      socket.on("close", () => s.sockets.delete(socket));
      readRequests(
        socket,
        (head, body) => {
          if (head.startsWith("GET")) return;
          s.bodies.push(body);
          socket.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        },
        (head) => {
          s.requests++;
          if (head.startsWith("GET")) socket.write(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`, "latin1"), body]));
        },
      );
    });
    s.server.on("tlsClientError", () => undefined);
    await new Promise<void>((resolve) => s.server.listen(port, "127.0.0.1", resolve));
    s.port = (s.server.address() as AddressInfo).port;
    return s;
  }

  function trusting(extra: Partial<NetOptions> = {}): NetOptions {
    return { ...DEFAULT_NET_OPTIONS, tls: { ca: readFileSync(cert.certFile, "utf8"), verify: true }, ...extra };
  }

  function connectTo(s: TlsServer, name = "localhost", options = trusting()): { host: HostAddresses; pools: RawPools } {
    host = new HostAddresses(name, "https:", s.port, options, new AddressResolver(), { addresses: ["127.0.0.1"], ttlMs: Infinity, source: "pinned" });
    pools = new RawPools(options);
    return { host, pools };
  }

  async function get(s: TlsServer, fresh = false): Promise<ResponseBody> {
    const response = await rawRequest({ pools: pools!, address: host!.addresses[0], host: host!, port: s.port }, { method: "GET", path: "/b/k", headers: { host: "localhost" }, body: undefined }, { expectedBytes: payload.length, fresh });
    assert.equal(response.statusCode, 200);
    return response.body as ResponseBody;
  }

  it("reads a body into the part buffer from decrypted chunks, keeps the connection, and a new connection resumes the TLS session", async () => {
    server = await serve(payload);
    connectTo(server);
    for (let i = 0; i < 3; i++) {
      const target = Buffer.alloc(payload.length);
      assert.equal(await (await get(server)).readInto(target, 0), payload.length);
      assert.ok(target.equals(payload), `request ${i}: the bytes as sent`);
    }
    assert.deepEqual(server.resumed, [false], "one kept-alive connection for three requests");
    // A request that needs a new connection (net/nagle-workaround.ts): it resumes the first one's session.
    const target = Buffer.alloc(payload.length);
    await (await get(server, true)).readInto(target, 0);
    assert.ok(target.equals(payload));
    assert.deepEqual(server.resumed, [false, true]);
    const stats = host!.stats()[0];
    assert.equal(stats.requests, 4);
    assert.equal(stats.errors, 0);
    assert.equal(stats.inFlight, 0);
  });

  it("reads a body slice by slice, and through the stream, when the consumer comes late and reads slowly", async () => {
    server = await serve(payload);
    connectTo(server);
    // Slices smaller than a decrypted chunk: the rest of each chunk waits for the next slice.
    let body = await get(server);
    await new Promise((resolve) => setImmediate(resolve));
    const sliced = Buffer.alloc(payload.length);
    let at = 0;
    for (;;) {
      const n = await body.readSlice(sliced.subarray(0, Math.min(sliced.length, at + 1000)), at);
      if (n === 0) break;
      at += n;
    }
    assert.equal(at, payload.length);
    assert.ok(sliced.equals(payload));
    body = await get(server);
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(chunk);
    assert.ok(Buffer.concat(chunks).equals(payload));
    assert.deepEqual(server.resumed, [false], "the same connection served both");
  });

  it("sends a large PUT body slice by slice over TLS, counting each slice", async () => {
    server = await serve(Buffer.alloc(0));
    connectTo(server);
    const response = await rawRequest({ pools: pools!, address: host!.addresses[0], host: host!, port: server.port }, { method: "PUT", path: "/b/k?partNumber=1&uploadId=u", headers: { host: "localhost" }, body: payload }, { expectedBytes: payload.length });
    assert.equal(response.statusCode, 200);
    assert.equal(server.bodies.length, 1);
    assert.ok(server.bodies[0].equals(payload));
    assert.equal(host!.stats()[0].errors, 0);
  });

  it("takes over the probe's connected socket for its first request (no second handshake, no undici)", async () => {
    server = await serve(payload.subarray(0, 1000));
    connectTo(server);
    await host!.firstContact();
    assert.equal(host!.addresses[0].reachability, "up");
    const target = Buffer.alloc(1000);
    assert.equal(await (await get(server)).readInto(target, 0), 1000);
    assert.deepEqual(server.resumed, [false], "the probe's connection carried the request");
  });

  it("refuses a certificate nobody trusts, or one for another name, and accepts any with verification off", async () => {
    server = await serve(payload.subarray(0, 10));
    connectTo(server, "localhost", { ...DEFAULT_NET_OPTIONS, tls: { verify: true } });
    await assert.rejects(get(server), (err: Error & { code?: string }) => err.code === "DEPTH_ZERO_SELF_SIGNED_CERT");
    pools!.close();
    await host!.close();
    // The certificate names 127.0.0.1 and localhost: checked against the endpoint's name, not the address dialled.
    connectTo(server, "s3.test");
    await assert.rejects(get(server), (err: Error & { code?: string }) => err.code === "ERR_TLS_CERT_ALTNAME_INVALID");
    pools!.close();
    await host!.close();
    connectTo(server, "s3.test", { ...DEFAULT_NET_OPTIONS, tls: { verify: false } });
    const target = Buffer.alloc(10);
    assert.equal(await (await get(server)).readInto(target, 0), 10);
  });

  /** SecureContexts that count how often a context trusting the CAs was asked for. */
  class CountingContexts extends SecureContexts {
    verifyingAsked = 0;
    override verifying(): SecureContext {
      this.verifyingAsked++;
      return super.verifying();
    }
  }

  /** One "run": new pools and dialers (nothing in memory from the run before) over the kept sessions in `store`. */
  async function runOnce(s: TlsServer, storeDir: string, now: () => number = Date.now, bytes = 1000): Promise<CountingContexts> {
    const contexts = new CountingContexts(readFileSync(cert.certFile, "utf8"), true);
    const sessions = new FileTlsSessionStore(storeDir, "test trust", now);
    connectTo(s, "localhost", { ...DEFAULT_NET_OPTIONS, tls: { verify: true, contexts, sessions } });
    await host!.firstContact();
    const target = Buffer.alloc(bytes);
    assert.equal(await (await get(s)).readInto(target, 0), bytes);
    assert.ok(target.equals(payload.subarray(0, bytes)));
    pools!.close();
    await host!.close();
    return contexts;
  }

  it("resumes the TLS session an earlier run kept, without loading any CA, on the probe's connection", async () => {
    server = await serve(payload.subarray(0, 1000));
    const storeDir = join(dir, "sessions-resume");
    const first = await runOnce(server, storeDir);
    assert.equal(first.verifyingAsked, 1, "the first run verifies the certificate against the CAs");
    const second = await runOnce(server, storeDir);
    assert.deepEqual(server.resumed, [false, true], "the second run's only connection resumed the first run's session");
    assert.equal(second.verifyingAsked, 0, "no context with the CAs was made (Node's root store parse is most of a short run's TLS cost)");
    const third = await runOnce(server, storeDir);
    assert.deepEqual(server.resumed, [false, true, true]);
    assert.equal(third.verifyingAsked, 0);
  });

  it("writes nothing when it resumed a session kept less than TLS_SESSION_REFRESH_MS ago (a home may be on NFS)", async () => {
    server = await serve(payload.subarray(0, 1000));
    const storeDir = join(dir, "sessions-refresh");
    let now = 1_000_000_000;
    await runOnce(server, storeDir, () => now);
    const file = join(storeDir, readdirSync(storeDir)[0]);
    const before = statSync(file).mtimeMs;
    now += TLS_SESSION_REFRESH_MS - 1;
    await runOnce(server, storeDir, () => now);
    assert.deepEqual(server.resumed, [false, true]);
    assert.equal(statSync(file).mtimeMs, before, "the store's file was not written");
    assert.deepEqual(readdirSync(storeDir), [basename(file)], "nor any temporary file");
  });

  /**
   * A run that keeps its session in `storeDir`, then another server process
   * on the same address and port (with `certificate`): its ticket keys are
   * new, so the kept session means nothing to it. Returns that server.
   */
  async function keptThenRestarted(storeDir: string, certificate = cert): Promise<TlsServer> {
    const first = await serve(payload.subarray(0, 1000));
    server = first;
    await runOnce(first, storeDir);
    await new Promise<void>((resolve) => first.server.close(() => resolve()));
    server = await serve(payload.subarray(0, 1000), first.port, certificate);
    return server;
  }

  it("dials again with the CAs when the server does not take the kept session, and keeps the new one", async () => {
    const storeDir = join(dir, "sessions-refused");
    const restarted = await keptThenRestarted(storeDir);
    const port = restarted.port;
    const kept = new FileTlsSessionStore(storeDir, "test trust").load("localhost", "127.0.0.1", port);
    assert.ok(kept);
    const again = await runOnce(restarted, storeDir);
    assert.deepEqual(restarted.resumed, [false], "one full handshake carried the request (the refused attempt never reached a request)");
    assert.equal(again.verifyingAsked, 1);
    const now = new FileTlsSessionStore(storeDir, "test trust").load("localhost", "127.0.0.1", port);
    assert.ok(now && !now.session.equals(kept.session), "the new server's session replaced the refused one");
    await runOnce(restarted, storeDir);
    assert.deepEqual(restarted.resumed, [false, true]);
  });

  it("never trusts a server for a kept session it cannot resume: another certificate on that address is refused", async () => {
    const storeDir = join(dir, "sessions-impostor");
    const impostor = await keptThenRestarted(storeDir, makeCertificate(dir, "impostor"));
    await assert.rejects(runOnce(impostor, storeDir), (err: Error & { code?: string }) => err.code === "DEPTH_ZERO_SELF_SIGNED_CERT");
    assert.equal(impostor.bodies.length, 0);
  });

  /**
   * A run whose probe resumed a kept session (the server `first`), then
   * `between()`, then a second request on a new connection of the same run.
   * Returns the run's contexts and the second request's bytes or error.
   */
  async function secondConnection(first: TlsServer, storeDir: string, between: () => Promise<TlsServer>): Promise<{ contexts: CountingContexts; second: TlsServer; result: Buffer | Error }> {
    await runOnce(first, storeDir);
    const contexts = new CountingContexts(readFileSync(cert.certFile, "utf8"), true);
    connectTo(first, "localhost", { ...DEFAULT_NET_OPTIONS, tls: { verify: true, contexts, sessions: new FileTlsSessionStore(storeDir, "test trust") } });
    await host!.firstContact();
    const target = Buffer.alloc(1000);
    assert.equal(await (await get(first)).readInto(target, 0), 1000);
    const second = await between();
    let result: Buffer | Error;
    try {
      const bytes = Buffer.alloc(1000);
      assert.equal(await (await get(second, true)).readInto(bytes, 0), 1000);
      result = bytes;
    } catch (err) {
      result = err as Error;
    }
    return { contexts, second, result };
  }

  /** Cuts every connection of `s` and serves again on its port, with new ticket keys (and `certificate`). */
  async function restarted(s: TlsServer, certificate = cert): Promise<TlsServer> {
    for (const socket of s.sockets) socket.destroy();
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
    server = await serve(payload.subarray(0, 1000), s.port, certificate);
    return server;
  }

  it("opens a run's other connections without any CA too when its probe resumed a kept session", async () => {
    server = await serve(payload.subarray(0, 1000));
    const { contexts, second, result } = await secondConnection(server, join(dir, "sessions-second"), async () => server!);
    assert.ok(Buffer.isBuffer(result) && result.equals(payload.subarray(0, 1000)));
    assert.deepEqual(second.resumed, [false, true, true], "run 1's full handshake, then run 2's probe and its second connection, both resumed");
    assert.equal(contexts.verifyingAsked, 0, "no context with the CAs in run 2");
  });

  it("dials a new connection again with the CAs, before sending anything, when the server no longer takes the session", async () => {
    const first = await serve(payload.subarray(0, 1000));
    server = first;
    const { contexts, second, result } = await secondConnection(first, join(dir, "sessions-second-refused"), () => restarted(first));
    assert.ok(Buffer.isBuffer(result) && result.equals(payload.subarray(0, 1000)), `the request succeeded: ${String(result)}`);
    assert.deepEqual(second.resumed, [false], "one full handshake carried the request (the refused attempt never reached a request)");
    assert.equal(second.requests, 1);
    assert.equal(contexts.verifyingAsked, 1);
    // The next connection loads the CAs from the start.
    const bytes = Buffer.alloc(1000);
    await (await get(second, true)).readInto(bytes, 0);
    assert.deepEqual(second.resumed, [false, true]);
  });

  it("never sends a request to a server on that address it cannot check: another certificate is refused on the second connection", async () => {
    const first = await serve(payload.subarray(0, 1000));
    server = first;
    const { second, result } = await secondConnection(first, join(dir, "sessions-second-impostor"), () => restarted(first, makeCertificate(dir, "impostor2")));
    assert.ok(result instanceof Error && (result as Error & { code?: string }).code === "DEPTH_ZERO_SELF_SIGNED_CERT", `refused: ${String(result)}`);
    assert.equal(second.requests, 0, "no request reached it");
  });

  it("dials a new connection again with the CAs when the server closes during a handshake without them", async () => {
    const first = await serve(payload.subarray(0, 1000));
    server = first;
    let front: NetServer | undefined;
    const { contexts, second, result } = await secondConnection(first, join(dir, "sessions-second-closed"), async () => {
      for (const socket of first.sockets) socket.destroy();
      await new Promise<void>((resolve) => first.server.close(() => resolve()));
      const backend = await serve(payload.subarray(0, 1000));
      server = backend;
      // On the address: a front that ends the first connection at its first bytes (a FIN), then passes the others on.
      let seen = 0;
      front = createNetServer((socket) => {
        if (seen++ === 0) return socket.once("data", () => socket.end());
        const upstream = netConnect(backend.port, "127.0.0.1");
        socket.pipe(upstream).pipe(socket);
        socket.on("error", () => upstream.destroy());
        upstream.on("error", () => socket.destroy());
      });
      await new Promise<void>((resolve) => front!.listen(first.port, "127.0.0.1", resolve));
      return Object.create(backend, { port: { value: first.port } }) as TlsServer;
    });
    front?.close();
    assert.ok(Buffer.isBuffer(result) && result.equals(payload.subarray(0, 1000)), `the request succeeded: ${String(result)}`);
    assert.equal(second.requests, 1);
    assert.equal(contexts.verifyingAsked, 1, "dialled again with the CAs");
  });
});
