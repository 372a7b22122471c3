import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { ObjectStream, StreamStoppedError } from "../../../src/engine/sinks/object-stream.js";
import type { ByteWriter } from "../../../src/engine/sinks/ordered-writer.js";
import { TAR_BLOCK, tarEntryHeader, tarEnd, tarPaddingLength } from "../../../src/engine/sinks/tar-header.js";

/** Collects what the stream writes; a write can be held until released (a slow reader). */
class Collector implements ByteWriter {
  chunks: Buffer[] = [];
  async write(data: Buffer): Promise<void> {
    this.chunks.push(Buffer.from(data));
  }
  async end(): Promise<void> {}
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Parts of `partSize` bytes, as a download lands them. */
const PART = 4;
const partsOf = (size: number): number => Math.ceil(size / PART);
const partsOfBody = (body: Buffer): Buffer[] => Array.from({ length: partsOf(body.length) }, (_, i) => body.subarray(i * PART, (i + 1) * PART));
const object = (name: string, body: Buffer) => ({ name, shown: `s3://b/${name}`, size: body.length, mtimeMs: 1_700_000_000_000 });

describe("engine/sinks/object-stream", () => {
  it("writes objects one after another in the order handed out, whatever order their parts land in", async () => {
    const out = new Collector();
    const stream = new ObjectStream(out, "raw", 100, partsOf);
    const bodies = [Buffer.from("first object!"), Buffer.alloc(0), Buffer.from("second"), Buffer.from("x")];
    const sinks = bodies.map((body, i) => stream.next(object(`k${i}`, body)));
    const writes: Promise<void>[] = [];
    // Last object first, each object's parts backwards.
    for (let i = bodies.length - 1; i >= 0; i--) {
      await sinks[i]!.open(bodies[i]!.length, { etag: "e", size: bodies[i]!.length });
      const parts = partsOfBody(bodies[i]!);
      for (let p = parts.length - 1; p >= 0; p--) writes.push(sinks[i]!.write(p, p * PART, parts[p]!));
    }
    await Promise.all(writes);
    await stream.finish();
    assert.deepEqual(out.bytes, Buffer.concat(bodies));
  });

  it("lets the downloads run at most `window` parts ahead of the writer", async () => {
    const out = new Collector();
    const stream = new ObjectStream(out, "raw", 2, partsOf);
    const a = stream.next(object("a", Buffer.alloc(8)));
    const b = stream.next(object("b", Buffer.alloc(8)));
    await a.waitForRoom!(0);
    await a.waitForRoom!(1);
    let roomForB = false;
    const waiting = b.waitForRoom!(0).then(() => (roomForB = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(roomForB, false, "b's first part is the window's third");
    await a.write(0, 0, Buffer.alloc(4));
    await waiting;
    assert.equal(roomForB, true, "one part written: room for one more");
  });

  it("refuses an object whose size changed since it was listed", async () => {
    const stream = new ObjectStream(new Collector(), "raw", 10, partsOf);
    const sink = stream.next(object("a", Buffer.alloc(10)));
    await assert.rejects(sink.open(11, { etag: "e", size: 11 }), /s3:\/\/b\/a is 11 bytes now but was listed with 10/);
  });

  it("a failed object stops the stream: the ones after it fail with StreamStoppedError, nothing after it is written", async () => {
    const out = new Collector();
    const stream = new ObjectStream(out, "raw", 10, partsOf);
    const a = stream.next(object("a", Buffer.from("aaaa")));
    const b = stream.next(object("b", Buffer.from("bbbb")));
    const later = b.write(0, 0, Buffer.from("bbbb"));
    await a.discard();
    await assert.rejects(later, StreamStoppedError);
    await assert.rejects(b.waitForRoom!(0), StreamStoppedError);
    assert.equal(out.bytes.length, 0);
  });

  it("--tar frames each object (header, bytes, padding) and ends the archive; GNU tar reads it back", async () => {
    const out = new Collector();
    const stream = new ObjectStream(out, "tar", 10, partsOf);
    const bodies: [string, Buffer][] = [["a/one.txt", Buffer.from("hello\n")], ["a/empty", Buffer.alloc(0)], [`a/${"n".repeat(150)}`, Buffer.alloc(TAR_BLOCK, 7)]];
    const writes: Promise<void>[] = [];
    for (const [name, body] of bodies) {
      const sink = stream.next(object(name, body));
      // As the engine does: opened (the first GET answered) before any part is written.
      await sink.open(body.length, { etag: "e", size: body.length });
      partsOfBody(body).forEach((part, p) => writes.push(sink.write(p, p * PART, part)));
    }
    await Promise.all(writes);
    await stream.finish();
    const listed = spawnSync("tar", ["--quoting-style=literal", "-tvf", "-"], { input: out.bytes, encoding: "utf8" });
    assert.equal(listed.status, 0, listed.stderr);
    const lines = listed.stdout.trim().split("\n").map((line) => line.split(/\s+/));
    assert.deepEqual(lines.map((f) => f.slice(5).join(" ")), bodies.map(([name]) => name));
    assert.deepEqual(lines.map((f) => Number(f[2])), bodies.map(([, body]) => body.length));
  });
});

describe("engine/sinks/object-stream: a tar stream that fails", () => {
  /** What Python's tarfile in stream mode (r|, as WebDataset) makes of `archive`: the members read, and its error. */
  const pythonReads = (archive: Buffer): { members: string[]; error: string | null } => {
    const script = [
      "import sys, tarfile, json",
      "names, error = [], None",
      "try:",
      "    with tarfile.open(fileobj=sys.stdin.buffer, mode='r|') as t:",
      "        for m in t:",
      "            f = t.extractfile(m)",
      "            if f: f.read()",
      "            names.append(m.name)",
      "except tarfile.TarError as e:",
      "    error = repr(e)",
      "print(json.dumps({'members': names, 'error': error}))",
    ].join("\n");
    const run = spawnSync("python3", ["-c", script], { input: archive, encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout) as { members: string[]; error: string | null };
  };

  it("stopped at an entry boundary: the failure mark after the whole entries; tarfile (r|) and GNU tar reject it", async () => {
    const out = new Collector();
    const stream = new ObjectStream(out, "tar", 10, partsOf);
    const a = stream.next(object("a.txt", Buffer.from("aaaaaa")));
    const b = stream.next(object("b.txt", Buffer.from("bbbbbb")));
    await a.open(6, { etag: "e", size: 6 });
    await Promise.all(partsOfBody(Buffer.from("aaaaaa")).map((part, p) => a.write(p, p * PART, part)));
    // b's first GET answered 404: it never opened, so its header was never written.
    await b.discard();
    assert.deepEqual(stream.progress(), { wholeObjects: 1, partial: false, stoppedAt: "s3://b/b.txt" });
    await stream.failed("s3://b/b.txt: no such object");
    const read = pythonReads(out.bytes);
    assert.deepEqual(read.members, ["a.txt"]);
    assert.match(read.error ?? "", /ReadError/);
    const gnu = spawnSync("tar", ["-tf", "-"], { input: out.bytes, encoding: "utf8" });
    assert.notEqual(gnu.status, 0, "GNU tar reports the damage");
  });

  it("stopped inside an entry: no mark, the entry cut short (a reader of its bytes fails), counted as partial", async () => {
    const out = new Collector();
    const stream = new ObjectStream(out, "tar", 10, partsOf);
    const body = Buffer.from("0123456789ab");
    const a = stream.next(object("a.bin", body));
    await a.open(body.length, { etag: "e", size: body.length });
    await a.write(0, 0, body.subarray(0, PART));
    await a.discard();
    assert.deepEqual(stream.progress(), { wholeObjects: 0, partial: true, stoppedAt: "s3://b/a.bin" });
    const before = out.bytes.length;
    await stream.failed("connection reset");
    assert.equal(out.bytes.length, before, "nothing added inside an entry");
    const read = pythonReads(out.bytes);
    assert.deepEqual(read.members, []);
    assert.match(read.error ?? "", /unexpected end of data/);
  });

  it("a raw stream gets no mark (no framing to put it in)", async () => {
    const out = new Collector();
    const stream = new ObjectStream(out, "raw", 10, partsOf);
    const a = stream.next(object("a", Buffer.from("aaaa")));
    await a.discard();
    await stream.failed("gone");
    assert.equal(out.bytes.length, 0);
  });
});

describe("engine/sinks/tar-header", () => {
  /** A header's checksum as readers compute it: its bytes, the checksum field read as spaces. */
  const checksumOf = (block: Buffer): number => {
    const copy = Buffer.from(block);
    copy.fill(0x20, 148, 156);
    return copy.reduce((sum, byte) => sum + byte, 0);
  };

  it("writes a ustar header readers accept: name, octal size and time, a valid checksum", () => {
    const header = tarEntryHeader({ name: "dir/file.bin", size: 1234, mtimeMs: 1_700_000_000_999 });
    assert.equal(header.length, TAR_BLOCK);
    assert.equal(header.subarray(0, 12).toString("ascii"), "dir/file.bin");
    assert.equal(header.subarray(124, 135).toString("ascii"), (1234).toString(8).padStart(11, "0"));
    assert.equal(header.subarray(136, 147).toString("ascii"), (1_700_000_000).toString(8).padStart(11, "0"));
    assert.equal(header.subarray(257, 263).toString("ascii"), "ustar\0");
    assert.equal(parseInt(header.subarray(148, 154).toString("ascii"), 8), checksumOf(header));
  });

  it("puts a long or non-ASCII name, and a size over 8 GiB, in a pax header Python's tarfile reads", () => {
    const name = `${"deep/".repeat(30)}ünï.bin`;
    const size = 9 * 1024 ** 3;
    const header = tarEntryHeader({ name, size, mtimeMs: 0 });
    assert.equal(header.length % TAR_BLOCK, 0);
    // tarfile reads the pax header and the entry header; the bytes are not needed for that.
    const read = spawnSync("python3", ["-c", [
      "import sys, tarfile, io",
      "data = sys.stdin.buffer.read()",
      "class T: fileobj = io.BytesIO(data); encoding = 'utf-8'; errors = 'surrogateescape'; pax_headers = {}; offset = 0",
      "info = tarfile.TarInfo.fromtarfile(T)",
      "print(info.name); print(info.size)",
    ].join("\n")], { input: header, encoding: "utf8" });
    assert.equal(read.status, 0, read.stderr);
    assert.deepEqual(read.stdout.trim().split("\n"), [name, String(size)]);
  });

  it("pads to whole blocks and ends with two zero blocks", () => {
    assert.equal(tarPaddingLength(0), 0);
    assert.equal(tarPaddingLength(1), 511);
    assert.equal(tarPaddingLength(512), 0);
    assert.deepEqual(tarEnd(), Buffer.alloc(1024));
  });
});
