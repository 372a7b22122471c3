import assert from "node:assert/strict";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { DEFAULT_NET_OPTIONS } from "../../../src/net/pools.js";
import { RawPools } from "../../../src/net/http1/pool.js";
import { rawRequest } from "../../../src/net/http1/request.js";
import { ResponseBody } from "../../../src/net/response-body.js";
import { readRequests } from "../../support/request-reader.js";
import { loopbackClient } from "../../support/loopback-client.js";

/**
 * s3x's own HTTP/1.1 client against a real TCP server on loopback that
 * answers with hand-written HTTP/1.1: the framings and failures radosgw
 * rarely produces on demand (chunked bodies, close-delimited bodies,
 * 100 Continue, a kept-alive connection the server closed meanwhile).
 */
type Responder = (request: string, socket: Socket, index: number) => void;

async function serve(respond: Responder): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  let index = 0;
  const server = createServer((socket) => {
    connections++;
    let pending = "";
    socket.on("data", (data) => {
      pending += data.toString("latin1");
      let end: number;
      while ((end = pending.indexOf("\r\n\r\n")) >= 0) {
        const request = pending.slice(0, end);
        pending = pending.slice(end + 4);
        respond(request, socket, index++);
      }
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

const payload = Buffer.from("0123456789abcdefghijklmnopqrstuvwxyz".repeat(1000), "latin1");

/**
 * A server that reads request bodies by their Content-Length and hands each
 * whole request to `respond`; `onHead` may answer early (before the body).
 */
async function serveBodies(
  respond: (body: Buffer, socket: Socket) => void,
  onHead: (head: string, socket: Socket) => boolean = () => false,
): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    let answered = false;
    readRequests(
      socket,
      (_head, body) => {
        if (!answered) respond(body, socket);
      },
      (head) => (answered = onHead(head, socket)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

/** Bytes no two slices share, so a slice sent twice or out of order shows. */
function patterned(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) bytes.writeUInt32LE(i, i);
  return bytes;
}

describe("net/http1: s3x's own HTTP/1.1 client", () => {
  const client = loopbackClient();

  async function get(port: number, length = payload.length, signal?: AbortSignal): Promise<{ status: number; headers: Record<string, string>; bytes: Buffer }> {
    const response = await rawRequest(client.target(port), { method: "GET", path: "/b/k", headers: { host: "s3.test", range: `bytes=0-${length - 1}` }, body: undefined }, { expectedBytes: length, signal });
    const body = response.body as ResponseBody;
    if (response.statusCode >= 300) {
      const chunks: Buffer[] = [];
      for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(chunk);
      return { status: response.statusCode, headers: response.headers, bytes: Buffer.concat(chunks) };
    }
    const target = Buffer.alloc(length);
    const n = await body.readInto(target, 0);
    return { status: response.statusCode, headers: response.headers, bytes: target.subarray(0, n) };
  }

  it("reads Content-Length bodies into the part buffer and keeps the connection alive", async () => {
    const s = await serve((_req, socket) => {
      socket.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${payload.length}\r\nETag: "e"\r\nX-Dup: a\r\nX-Dup: b\r\n\r\n`);
      // In pieces, so reads land both in scratch space and in the part buffer.
      socket.write(payload.subarray(0, 10));
      setImmediate(() => socket.write(payload.subarray(10)));
    });
    client.server = s.server;
    for (let i = 0; i < 3; i++) {
      const got = await get(s.port);
      assert.equal(got.status, 206);
      assert.equal(got.headers.etag, '"e"');
      assert.equal(got.headers["x-dup"], "a, b");
      assert.ok(got.bytes.equals(payload));
    }
    assert.equal(s.connections(), 1, "one kept-alive connection for three requests");
    const stats = client.host.stats()[0];
    assert.equal(stats.requests, 3);
    assert.equal(stats.errors, 0);
    assert.equal(stats.inFlight, 0);
  });

  it("keeps body bytes that came with the head until a late consumer takes them, whole or in part, as part buffer or stream", async () => {
    const small = payload.subarray(0, 5000);
    const s = await serve((_req, socket, index) => {
      const head = (n: number) => Buffer.from(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${n}\r\n\r\n`, "latin1");
      // Even requests: head and the whole body in one write. Odd: head and the body's first half, the rest later.
      if (index % 2 === 0) socket.write(Buffer.concat([head(small.length), small]));
      else {
        socket.write(Buffer.concat([head(payload.length), payload.subarray(0, 1000)]));
        setTimeout(() => socket.write(payload.subarray(1000)), 30);
      }
    });
    client.server = s.server;
    const late = () => new Promise((resolve) => setTimeout(resolve, 20));
    for (const asStream of [false, true, false, true]) {
      for (const expected of [small, payload]) {
        const response = await rawRequest(client.target(s.port), { method: "GET", path: "/b/k", headers: { host: "s3.test" }, body: undefined }, { expectedBytes: expected.length });
        await late(); // the consumer comes after the bytes did
        const body = response.body as ResponseBody;
        let got: Buffer;
        if (asStream) {
          const chunks: Buffer[] = [];
          for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(chunk);
          got = Buffer.concat(chunks);
        } else {
          const target = Buffer.alloc(expected.length);
          got = target.subarray(0, await body.readInto(target, 0));
        }
        assert.ok(got.equals(expected), `${asStream ? "stream" : "part buffer"}, ${expected.length} bytes`);
      }
    }
    assert.equal(s.connections(), 1, "one kept-alive connection throughout");
    assert.equal(client.host.stats()[0].errors, 0);
  });

  it("undoes chunked framing, skips 100 Continue, and reads close-delimited bodies", async () => {
    const s = await serve((_req, socket, index) => {
      if (index === 0) {
        socket.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        socket.write(`${(1000).toString(16)};ext=1\r\n`);
        socket.write(Buffer.concat([payload.subarray(0, 1000), Buffer.from(`\r\n${(payload.length - 1000).toString(16)}\r\n`)]));
        socket.write(Buffer.concat([payload.subarray(1000), Buffer.from("\r\n0\r\nX-Trailer: t\r\n\r\n")]));
      } else {
        socket.end(Buffer.concat([Buffer.from("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"), payload]));
      }
    });
    client.server = s.server;
    assert.ok((await get(s.port)).bytes.equals(payload), "chunked");
    assert.ok((await get(s.port)).bytes.equals(payload), "close-delimited");
  });

  it("reads a body slice by slice as the consumer is ready for each (socket reads straight into the slice, or through the stream), whatever the framing", async () => {
    const big = patterned(1_000_000);
    const s = await serve((_req, socket, index) => {
      if (index === 0) {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\n\r\n`);
        socket.write(big.subarray(0, 1000)); // with the head: held, then taken by the first slice
        setImmediate(() => socket.write(big.subarray(1000)));
      } else {
        // Chunked: pieces that straddle slice boundaries go through the copy path.
        socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (let o = 0; o < big.length; o += 99_991) {
          const piece = big.subarray(o, o + 99_991);
          socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]));
        }
        socket.write("0\r\n\r\n");
      }
    });
    client.server = s.server;
    for (const framing of ["length", "chunked"]) {
      const response = await rawRequest(client.target(s.port), { method: "GET", path: "/b/k", headers: { host: "s3.test" }, body: undefined }, { expectedBytes: big.length });
      const body = response.body as ResponseBody;
      const slice = Buffer.alloc(70_001);
      const received: Buffer[] = [];
      let counted = 0;
      // The first slice is filled in two calls (as a retry continues a partly filled slice).
      let filled = await body.readSlice(slice.subarray(0, 500), 0, (n) => (counted += n));
      assert.equal(filled, 500);
      for (;;) {
        const n = await body.readSlice(slice, filled, (k) => (counted += k));
        received.push(Buffer.from(slice.subarray(0, filled + n)));
        if (filled + n < slice.length) break;
        filled = 0;
        // A slow disk: the body waits (paused) until the next slice is ready.
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      assert.ok(Buffer.concat(received).equals(big), `${framing}: every byte once, in order`);
      assert.equal(counted, big.length);
    }
    assert.equal(s.connections(), 1, "the connection is kept alive after a sliced body");
  });

  it("a body that fails with nobody reading it does not end the process; a later reader still gets the error", async () => {
    const body = new ResponseBody();
    body.attach({ pause: () => undefined, resume: () => undefined, abort: () => undefined });
    body.deliver(Buffer.from("unread"));
    body.fail(Object.assign(new Error("The client is destroyed"), { code: "UND_ERR_DESTROYED" }));
    await new Promise((resolve) => setImmediate(resolve)); // an unhandled 'error' would be thrown here
    await assert.rejects(body.readInto(Buffer.alloc(16), 0), /The client is destroyed/);
  });

  it("streams an error body for the SDK's error parser, on the same connection", async () => {
    const xml = "<?xml version=\"1.0\"?><Error><Code>PreconditionFailed</Code><Message></Message></Error>";
    const s = await serve((_req, socket, index) => {
      if (index === 0) socket.write(`HTTP/1.1 412 Precondition Failed\r\nContent-Type: application/xml\r\nContent-Length: ${xml.length}\r\n\r\n${xml}`);
      else socket.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${payload.length}\r\n\r\n`), socket.write(payload);
    });
    client.server = s.server;
    const error = await get(s.port);
    assert.equal(error.status, 412);
    assert.equal(error.bytes.toString(), xml);
    assert.ok((await get(s.port)).bytes.equals(payload));
    assert.equal(s.connections(), 1);
  });

  it("sends a request again on a fresh connection when the kept-alive one was closed by the server", async () => {
    const s = await serve((_req, socket) => {
      // Answer, then drop the connection without saying so (as an idle timeout would).
      socket.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${payload.length}\r\n\r\n`);
      socket.write(payload, () => setTimeout(() => socket.destroy(), 20));
    });
    client.server = s.server;
    assert.ok((await get(s.port)).bytes.equals(payload));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok((await get(s.port)).bytes.equals(payload));
    assert.equal(s.connections(), 2);
    assert.equal(client.host.stats()[0].errors, 0);
  });

  it("sends a DELETE again on a fresh connection when the kept-alive one dies under it, but never a POST", async () => {
    // Each connection answers its first request and drops the second unanswered
    // (a server closing an idle connection just as the request arrives).
    const served = new WeakMap<Socket, number>();
    const s = await serve((_req, socket) => {
      const n = (served.get(socket) ?? 0) + 1;
      served.set(socket, n);
      if (n === 1) socket.write("HTTP/1.1 204 No Content\r\n\r\n");
      else socket.destroy();
    });
    client.server = s.server;
    const send = (method: string) => rawRequest(client.target(s.port), { method, path: "/b/k", headers: { host: "s3.test" }, body: undefined }, { expectedBytes: 0 });
    assert.equal((await send("DELETE")).statusCode, 204);
    assert.equal((await send("DELETE")).statusCode, 204, "resent on a fresh connection");
    assert.equal(s.connections(), 2);
    // The fresh connection served one request: the next one finds it dying.
    await assert.rejects(send("POST"), (err: Error & { code?: string }) => ["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"].includes(err.code ?? ""));
    assert.equal(s.connections(), 2, "a POST that may have reached the server is not sent again here");
  });

  it("sends a request marked fresh on a new connection, which then serves kept-alive requests", async () => {
    // Answers as radosgw does for documents: the head, then the chunked body in a second write.
    const s = await serve((_req, socket) => {
      socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      setImmediate(() => socket.write("5\r\n<a/>\n\r\n0\r\n\r\n"));
    });
    client.server = s.server;
    const send = async (method: string, fresh: boolean): Promise<string> => {
      const response = await rawRequest(client.target(s.port), { method, path: "/b?list-type=2", headers: { host: "s3.test" }, body: undefined }, { expectedBytes: 0, fresh });
      const chunks: Buffer[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) chunks.push(chunk);
      return Buffer.concat(chunks).toString();
    };
    assert.equal(await send("GET", false), "<a/>\n");
    assert.equal(await send("GET", false), "<a/>\n");
    assert.equal(s.connections(), 1);
    assert.equal(await send("GET", true), "<a/>\n");
    assert.equal(await send("POST", true), "<a/>\n");
    assert.equal(s.connections(), 3, "each fresh request opened its own connection");
    // The fresh ones went back to the pool: plain requests reuse them.
    for (let i = 0; i < 3; i++) assert.equal(await send("GET", false), "<a/>\n");
    assert.equal(s.connections(), 3);
    assert.equal(client.host.stats()[0].errors, 0);
  });

  it("sends POST bodies (CompleteMultipartUpload) and reads a chunked XML answer whole", async () => {
    const seen: string[] = [];
    const xml = '<?xml version="1.0"?><CompleteMultipartUploadResult><ETag>"abc-3"</ETag></CompleteMultipartUploadResult>';
    const s = await serveBodies((body, socket) => {
      seen.push(body.toString());
      // radosgw sends whitespace while it assembles the parts, hence chunked.
      socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      socket.write(`1\r\n \r\n${xml.length.toString(16)}\r\n${xml}\r\n0\r\n\r\n`);
    });
    client.server = s.server;
    const request = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>";
    const response = await rawRequest(client.target(s.port), { method: "POST", path: "/b/k?uploadId=u", headers: { host: "s3.test" }, body: Buffer.from(request) }, { expectedBytes: request.length });
    const chunks: Buffer[] = [];
    for await (const chunk of response.body as AsyncIterable<Buffer>) chunks.push(chunk);
    assert.equal(Buffer.concat(chunks).toString(), ` ${xml}`);
    // An empty POST (CreateMultipartUpload) states its length too.
    await rawRequest(client.target(s.port), { method: "POST", path: "/b/k?uploads", headers: { host: "s3.test" }, body: undefined }, { expectedBytes: 0 }).then(async (r) => {
      for await (const _ of r.body as AsyncIterable<Buffer>);
    });
    assert.deepEqual(seen, [request, ""]);
    assert.equal(s.connections(), 1);
  });

  it("sends PUT bodies with their length, and reads HEAD answers without a body", async () => {
    const seen: string[] = [];
    const s = await serve((req, socket, index) => {
      seen.push(req.split("\r\n")[0]);
      if (index === 0) {
        socket.write('HTTP/1.1 200 OK\r\nETag: "p"\r\nContent-Length: 0\r\n\r\n');
      } else {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${payload.length}\r\nETag: "h"\r\n\r\n`);
      }
    });
    client.server = s.server;
    const put = await rawRequest(client.target(s.port), { method: "PUT", path: "/b/k", headers: { host: "s3.test" }, body: Buffer.from("hello") }, { expectedBytes: 5 });
    assert.equal(put.headers.etag, '"p"');
    const head = await rawRequest(client.target(s.port), { method: "HEAD", path: "/b/k", headers: { host: "s3.test" }, body: undefined }, { expectedBytes: 0 });
    assert.equal(head.headers["content-length"], String(payload.length));
    const chunks: Buffer[] = [];
    for await (const chunk of head.body as AsyncIterable<Buffer>) chunks.push(chunk);
    assert.equal(Buffer.concat(chunks).length, 0);
    // This server does not read bodies: the PUT's 5 bytes come right before the next request's head.
    assert.deepEqual(seen, ["PUT /b/k HTTP/1.1", "helloHEAD /b/k HTTP/1.1"]);
    assert.equal(s.connections(), 1);
    assert.equal(client.host.stats()[0].bytesOut, 5);
  });

  it("sends a large PUT body slice by slice, counting each slice as it goes out, on a kept-alive connection", async () => {
    const body = patterned(3 * 1024 * 1024 + 4);
    const received: Buffer[] = [];
    const s = await serveBodies((got, socket) => {
      received.push(Buffer.from(got));
      socket.write('HTTP/1.1 200 OK\r\nETag: "big"\r\nContent-Length: 0\r\n\r\n');
    });
    client.server = s.server;
    for (let i = 0; i < 2; i++) {
      const put = await rawRequest(client.target(s.port), { method: "PUT", path: "/b/k?partNumber=1", headers: { host: "s3.test" }, body: body }, { expectedBytes: body.length });
      assert.equal(put.statusCode, 200);
      assert.equal(put.headers.etag, '"big"');
    }
    assert.equal(received.length, 2);
    for (const got of received) assert.ok(got.equals(body), "every byte arrives, in order");
    assert.equal(s.connections(), 1, "the connection is reused once the body is all sent");
    const stats = client.host.stats()[0];
    assert.equal(stats.bytesOut, 2 * body.length);
    assert.equal(stats.errors, 0);
    assert.equal(stats.inFlight, 0);
  });

  it("takes an early answer to a large PUT (an error before the body is all sent) and does not reuse that connection", async () => {
    const xml = "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>no</Message></Error>";
    const s = await serveBodies(
      (_got, socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'),
      (head, socket) => {
        if (!head.startsWith("PUT /b/denied")) return false;
        socket.write(`HTTP/1.1 403 Forbidden\r\nContent-Length: ${xml.length}\r\n\r\n${xml}`);
        return true;
      },
    );
    client.server = s.server;
    const body = patterned(8 * 1024 * 1024);
    const denied = await rawRequest(client.target(s.port), { method: "PUT", path: "/b/denied", headers: { host: "s3.test" }, body: body }, { expectedBytes: body.length });
    assert.equal(denied.statusCode, 403);
    const chunks: Buffer[] = [];
    for await (const chunk of denied.body as AsyncIterable<Buffer>) chunks.push(chunk);
    assert.equal(Buffer.concat(chunks).toString(), xml);
    const next = await rawRequest(client.target(s.port), { method: "PUT", path: "/b/k", headers: { host: "s3.test" }, body: Buffer.from("small") }, { expectedBytes: 5 });
    assert.equal(next.statusCode, 200);
    assert.equal(s.connections(), 2, "the half-sent connection was not handed to the next request");
    assert.equal(client.host.stats()[0].inFlight, 0);
  });

  it("fails a large PUT whose server stops reading the body after the stall timeout, naming the address", async () => {
    client.pools = new RawPools({ ...DEFAULT_NET_OPTIONS, firstByteTimeoutMs: 60_000, stallTimeoutMs: 300 });
    let stalled: Socket | undefined;
    const s = await serveBodies(() => undefined, (_head, socket) => {
      socket.pause(); // takes nothing more: the kernel's buffers fill, then the writes stall
      stalled = socket;
      return true;
    });
    client.server = s.server;
    // Larger than loopback socket buffers can hold.
    const body = Buffer.alloc(64 * 1024 * 1024);
    const started = Date.now();
    await assert.rejects(rawRequest(client.target(s.port), { method: "PUT", path: "/b/k", headers: { host: "s3.test" }, body: body }, { expectedBytes: body.length }), (err: Error & { code?: string; address?: string }) => {
      assert.equal(err.code, "UND_ERR_BODY_TIMEOUT");
      assert.match(err.message, /request body stalled/);
      assert.equal(err.address, "127.0.0.1");
      return true;
    });
    // The stall timeout (300 ms), not the first-byte timeout (60 s), ended it, however loaded the machine.
    assert.ok(Date.now() - started < 30_000, "the stall timeout, not the first-byte timeout, ended it");
    assert.equal(client.host.stats()[0].state, "bad");
    assert.ok(client.host.stats()[0].bytesOut < body.length, "only what the kernel took is counted");
    stalled?.destroy(); // a paused socket never sees the client's close, and would keep the server open
  });

  it("fails a body cut short with a network error the retry policy knows, naming the address", async () => {
    const s = await serve((_req, socket) => {
      socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${payload.length}\r\n\r\n`), payload.subarray(0, 100)]));
    });
    client.server = s.server;
    await assert.rejects(get(s.port), (err: Error & { code?: string; address?: string }) => {
      assert.equal(err.code, "UND_ERR_SOCKET");
      assert.equal(err.address, "127.0.0.1");
      return true;
    });
    assert.equal(client.host.stats()[0].errors, 1);
    assert.equal(client.host.stats()[0].inFlight, 0);
  });

  it("gives up on a server that never answers after the first-byte timeout", async () => {
    client.pools.close();
    client.pools = new RawPools({ ...DEFAULT_NET_OPTIONS, firstByteTimeoutMs: 1_000 });
    const s = await serve(() => undefined);
    client.server = s.server;
    await assert.rejects(get(s.port), (err: Error & { code?: string }) => err.code === "UND_ERR_HEADERS_TIMEOUT");
    assert.equal(client.host.stats()[0].state, "bad");
  });

  it("honours the caller's abort signal before and during the response", async () => {
    const s = await serve((_req, socket) => socket.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${payload.length}\r\n\r\n`));
    client.server = s.server;
    const early = new AbortController();
    early.abort(new Error("cancelled"));
    await assert.rejects(get(s.port, payload.length, early.signal), /cancelled/);
    const late = new AbortController();
    const response = await rawRequest(client.target(s.port), { method: "GET", path: "/b/k", headers: { host: "s3.test", range: "bytes=0-9" }, body: undefined }, { expectedBytes: 10, signal: late.signal });
    const reading = (response.body as ResponseBody).readInto(Buffer.alloc(payload.length), 0);
    late.abort(new Error("cancelled mid-body"));
    await assert.rejects(reading, /cancelled mid-body/);
    assert.equal(client.host.stats()[0].errors, 0, "a cancellation says nothing about the address");
    assert.equal(client.host.stats()[0].inFlight, 0);
  });
});
