import assert from "node:assert/strict";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { AddressResolver } from "../../../src/net/resolver.js";
import { HostAddresses, DEFAULT_NET_OPTIONS } from "../../../src/net/pools.js";
import { RawPools } from "../../../src/net/http1/pool.js";
import { rawRequest } from "../../../src/net/http1/request.js";
import { REQUEST_CASES, S3X_CASES, TO_CLOSE, type LlhttpCase } from "../../support/llhttp-cases.js";
import { RESPONSE_CASES } from "../../support/llhttp-response-cases.js";

/**
 * s3x's own HTTP/1.1 client held to llhttp, the parser under Node's http and
 * undici: each of llhttp's response cases that applies to a client (see
 * test/support/llhttp-cases.ts) is written by a real TCP server on loopback
 * in answer to a real request, and s3x must refuse what llhttp refuses and
 * take what it takes, body bytes and all; the few deliberate differences say
 * why in the case (`differs`).
 */

/** What the second request on a connection gets: a plain answer, to tell reuse from a new connection. */
const PLAIN = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/** A server that answers the first request it reads with the case's bytes, and any later one with PLAIN. */
async function serveCase(c: LlhttpCase): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  let answered = false;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let pending = "";
    socket.on("data", (data) => {
      pending += data.toString("latin1");
      let end: number;
      while ((end = pending.indexOf("\r\n\r\n")) >= 0) {
        pending = pending.slice(end + 4);
        if (answered) {
          socket.write(PLAIN, "latin1");
          continue;
        }
        answered = true;
        socket.write(c.raw, "latin1");
        if (c.close) socket.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

interface Outcome {
  status?: number;
  headers?: Record<string, string>;
  body?: Buffer;
  error?: Error;
}

describe("net/http1: llhttp's response cases", () => {
  let host: HostAddresses;
  let pools: RawPools;
  let served: Awaited<ReturnType<typeof serveCase>> | undefined;
  let connections: number;
  beforeEach(() => {
    host = new HostAddresses("s3.test", "http:", 1, DEFAULT_NET_OPTIONS, new AddressResolver(), { addresses: ["127.0.0.1"], ttlMs: Infinity, source: "pinned" });
    // Short timeouts: a client that waits where it should have refused fails on a timeout, which no case expects.
    pools = new RawPools({ ...DEFAULT_NET_OPTIONS, firstByteTimeoutMs: 3_000, stallTimeoutMs: 3_000 });
    connections = 0;
  });
  afterEach(async () => {
    pools.close();
    await host.close();
    if (served) {
      for (const socket of served.sockets) socket.destroy();
      await new Promise<void>((resolve) => served!.server.close(() => resolve()));
    }
    served = undefined;
  });

  async function send(port: number, method: string): Promise<Outcome> {
    let outcome: Outcome;
    try {
      const response = await rawRequest(
        { pools, address: host.addresses[0], host, port },
        { method, path: "/b/k", headers: { host: "s3.test" }, body: undefined },
        { expectedBytes: 1 },
      );
      outcome = { status: response.statusCode, headers: response.headers };
      const chunks: Buffer[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) chunks.push(chunk);
      outcome.body = Buffer.concat(chunks);
    } catch (err) {
      outcome = { ...outcome!, error: err as Error };
    }
    return outcome;
  }

  for (const c of [...RESPONSE_CASES, ...REQUEST_CASES, ...S3X_CASES]) {
    it(`${c.source}: ${c.title}${c.differs ? " (s3x differs)" : ""}`, async () => {
      served = await serveCase(c);
      served.server.on("connection", () => connections++);
      const got = await send(served.port, c.method ?? "GET");
      const expect = c.expect;
      if (expect.kind === "refuse") {
        assert.ok(got.error, `s3x took what it should refuse (${expect.error}): status ${got.status}, body ${JSON.stringify(got.body?.toString("latin1"))}`);
        assert.match(got.error.message, expect.error);
        if (expect.status !== undefined) assert.equal(got.status, expect.status, "the head should be taken, the body refused");
        return;
      }
      assert.equal(got.error, undefined, `s3x refused: ${got.error?.message}`);
      assert.equal(got.status, expect.status);
      const body = expect.body === TO_CLOSE ? c.raw.slice(c.raw.indexOf("\r\n\r\n") + 4) : expect.body;
      assert.equal(got.body!.toString("latin1"), body);
      for (const [name, value] of Object.entries(expect.headers ?? {})) assert.equal(got.headers![name], value, `header ${name}`);
      if (c.reuse === undefined) return;
      const again = await send(served.port, "GET");
      assert.equal(again.error, undefined, `the request after the case failed: ${again.error?.message}`);
      assert.equal(again.body!.toString("latin1"), "ok");
      assert.equal(connections, c.reuse ? 1 : 2, c.reuse ? "the connection should serve the next request" : "the connection should not be reused");
    });
  }
});
