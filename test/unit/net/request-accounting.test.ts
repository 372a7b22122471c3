import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DEFAULT_NET_OPTIONS, HostDirectory, type AddressStats } from "../../../src/net/pools.js";
import { Transport } from "../../../src/net/transport.js";

/**
 * Both transports (s3x's HTTP/1.1 client and undici) keep an address's books
 * through one RequestAccounting: the same requests leave the same counts,
 * whichever carried them. Against a real node:http server on loopback.
 */
describe("net/request-accounting: one set of books for both transports", () => {
  let server: Server;
  let port: number;
  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (req.url?.startsWith("/fail")) {
          res.writeHead(503, { "content-type": "application/xml" }).end("<Error><Code>SlowDown</Code></Error>");
          return;
        }
        const body = req.method === "GET" ? Buffer.alloc(3000, 7) : Buffer.alloc(0);
        res.writeHead(200, { "content-length": body.length, etag: `"${Buffer.concat(chunks).length}"` }).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends a GET, a PUT with a 2 MiB body (sent in slices), and a GET answered 503; returns the address's stats. */
  async function run(): Promise<AddressStats> {
    const pools = new HostDirectory(DEFAULT_NET_OPTIONS);
    const transport = new Transport(pools, DEFAULT_NET_OPTIONS);
    const send = async (method: "GET" | "PUT", path: string, body?: Buffer): Promise<number> => {
      const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...(body ? { "content-length": String(body.length) } : {}) };
      const response = await transport.send({ protocol: "http:", hostname: "127.0.0.1", port, method, path, headers, body });
      for await (const _ of response.body as AsyncIterable<Buffer>);
      return response.statusCode;
    };
    try {
      assert.equal(await send("GET", "/b/k"), 200);
      assert.equal(await send("PUT", "/b/k", Buffer.alloc(2 * 1024 * 1024, 1)), 200);
      assert.equal(await send("GET", "/fail"), 503);
      const [stats] = await pools.stats();
      return stats;
    } finally {
      await transport.close();
    }
  }

  it("counts requests, bytes sent and in-flight requests, and a 503 answer as no transport error", async () => {
    const stats = await run();
    assert.equal(stats.requests, 3);
    assert.equal(stats.inFlight, 0, "every request settled");
    assert.equal(stats.bytesOut, 2 * 1024 * 1024, "the PUT's body, counted slice by slice");
    assert.ok(stats.bytesIn >= 3000, "the GET's body came in");
    assert.equal(stats.errors, 0, "a 503 is the server's answer, not a failed request");
  });
});
