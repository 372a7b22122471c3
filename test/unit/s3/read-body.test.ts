import assert from "node:assert/strict";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { rawRequest } from "../../../src/net/http1/request.js";
import { readBody } from "../../../src/s3/read-body.js";
import { RangeSlices } from "../../../src/engine/range-slices.js";
import { loopbackClient } from "../../support/loopback-client.js";

/**
 * A ranged GET's body read in slices (s3/read-body.ts) through s3x's own
 * HTTP/1.1 client from a real TCP server, into the two slice buffers a
 * download to a file uses (engine/range-slices.ts).
 */

/** Bytes no two slices share, so a slice written twice, lost or out of place shows. */
function patterned(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) bytes.writeUInt32LE(i, i);
  return bytes;
}

/** Larger than a socket read (64 KiB): one read crosses at most one slice's end. */
const SLICE = 70_001;

describe("s3/read-body: a ranged GET's body into slices", () => {
  const client = loopbackClient();
  let connections = 0;

  /** Serves `body` to every GET, framed by Content-Length or in chunks that straddle slice ends. */
  async function serve(body: Buffer, framing: "length" | "chunked"): Promise<number> {
    connections = 0;
    const server = createServer((socket: Socket) => {
      connections++;
      socket.on("data", () => {
        if (framing === "length") {
          socket.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: ${body.length}\r\n\r\n`);
          socket.write(body);
          return;
        }
        socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (let o = 0; o < body.length; o += 49_999) {
          const piece = body.subarray(o, o + 49_999);
          socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]));
        }
        socket.write("0\r\n\r\n");
      });
      socket.on("error", () => undefined);
    });
    client.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  /**
   * GETs the body into slices; returns what was written, in object order, and
   * how often reading had to wait for a slice. A disk that "keeps up" ends
   * each write at once; one "behind" ends a write only when reading has had to
   * wait for a slice (or has ended): slower than the network, with no clock.
   */
  async function download(port: number, size: number, disk: "keeps up" | "behind"): Promise<{ written: Buffer; waits: number; got: number }> {
    const written = Buffer.alloc(size);
    const memory = Buffer.alloc(2 * SLICE);
    const heldWrites: (() => void)[] = [];
    let readingEnded = false;
    const endHeldWrites = (): void => heldWrites.splice(0).forEach((end) => end());
    const slices = new RangeSlices([memory.subarray(0, SLICE), memory.subarray(SLICE)], 0, async (offset, data) => {
      if (disk === "behind" && !readingEnded) await new Promise<void>((end) => heldWrites.push(end));
      data.copy(written, offset);
    });
    let waits = 0;
    const full = slices.full.bind(slices);
    slices.full = () => {
      waits++;
      endHeldWrites();
      return full();
    };
    const response = await rawRequest(client.target(port), { method: "GET", path: "/b/k", headers: { host: "s3.test" }, body: undefined }, { expectedBytes: size });
    try {
      const got = await readBody(response.body, { target: memory, offset: 0, slices, onBytes: (n) => slices.advance(n) }, size);
      return { written, waits, got };
    } finally {
      readingEnded = true;
      endHeldWrites();
      await slices.finish();
    }
  }

  /** Serves `size` patterned bytes, downloads them whole and checks every byte; returns how often reading waited for a slice. */
  async function downloadChecked(size: number, framing: "length" | "chunked", disk: "keeps up" | "behind"): Promise<number> {
    const body = patterned(size);
    const port = await serve(body, framing);
    const { written, waits, got } = await download(port, size, disk);
    assert.equal(got, size);
    assert.ok(written.equals(body), "every byte once, at its offset");
    return waits;
  }

  for (const framing of ["length", "chunked"] as const) {
    it(`goes on from one slice into the other with no pause while the disk keeps up (${framing === "length" ? "socket reads straight into the slices" : "chunked, copied"})`, async () => {
      assert.equal(await downloadChecked(10 * SLICE + 12_345, framing, "keeps up"), 0, "reading never waited for a slice");
    });

    it(`waits for a slice whose write has not ended, and loses nothing (${framing})`, async () => {
      assert.ok((await downloadChecked(6 * SLICE + 1, framing, "behind")) > 0, "reading waited for a slice");
    });
  }

  for (const disk of ["keeps up", "behind"] as const) {
    it(`fails a chunked body longer than the range in its last slice, naming the whole body's sizes (disk ${disk})`, async () => {
      // The last slice ends with the body, not with its buffer. Behind, reading
      // waited for slices first: the figures still count from the body's start.
      const size = 3 * SLICE + 100;
      const body = patterned(size + 5_000);
      const port = await serve(body, "chunked");
      await assert.rejects(download(port, size, disk), (err: Error & { code?: string }) => {
        assert.equal(err.code, "S3X_BODY_OVERFLOW");
        const [, expected, got] = /\((\d+) bytes, got at least (\d+)\)/.exec(err.message) ?? [];
        assert.equal(Number(expected), size, err.message);
        assert.ok(Number(got) > size && Number(got) <= size + 5_000, err.message);
        return true;
      });
    });
  }

  it("reads a body that ends exactly at a slice's end to its end (the connection is kept for the next request)", async () => {
    const size = 4 * SLICE;
    const body = patterned(size);
    const port = await serve(body, "length");
    for (let i = 0; i < 2; i++) {
      const { written, got } = await download(port, size, "keeps up");
      assert.equal(got, size);
      assert.ok(written.equals(body), `request ${i + 1}: every byte once, at its offset`);
    }
    assert.equal(connections, 1, "one connection served both");
  });
});
