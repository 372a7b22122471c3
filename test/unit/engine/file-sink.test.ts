import assert from "node:assert/strict";
import { appendFile, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileSink } from "../../../src/engine/sinks/file-sink.js";
import { LeftoverIndex } from "../../../src/engine/sinks/leftover-index.js";

describe("engine/sinks/file-sink", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-sink-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes parts at their offsets into a temporary file, renamed only on commit", async () => {
    const sink = new FileSink(join(dir, "out.bin"));
    await sink.open(10, { etag: '"e"', size: 10 });
    await sink.write(1, 5, Buffer.from("world"));
    await sink.write(0, 0, Buffer.from("hello"));
    assert.deepEqual((await readdir(dir)).sort(), [".out.bin.s3x-part", ".out.bin.s3x-part.journal"]);
    await sink.commit({ lastModified: new Date("2020-01-02T03:04:05Z") });
    assert.deepEqual(await readdir(dir), ["out.bin"]);
    assert.equal(await readFile(join(dir, "out.bin"), "utf8"), "helloworld");
    assert.equal((await stat(join(dir, "out.bin"))).mtime.toISOString(), "2020-01-02T03:04:05.000Z");
  });

  it("journals each range after its bytes; a later sink reads the journal back, ignoring a torn last line", async () => {
    const first = new FileSink(join(dir, "f"));
    await first.open(30, { etag: '"abc"', size: 30 });
    await first.write(0, 0, Buffer.alloc(10, 1));
    await first.write(2, 20, Buffer.alloc(10, 3));
    assert.equal(await first.discard(true), true, "kept for the next run");
    // A kill -9 in the middle of an append leaves half a line.
    await appendFile(join(dir, ".f.s3x-part.journal"), '{"o":10,"n');
    const second = new FileSink(join(dir, "f"));
    const previous = await second.previous();
    assert.deepEqual(previous?.identity, { etag: '"abc"', size: 30 });
    assert.deepEqual(previous?.done, [
      { offset: 0, length: 10 },
      { offset: 20, length: 10 },
    ]);
    // Continue it: fill the gap, read back an earlier range, commit.
    await second.reopen();
    await second.write(1, 10, Buffer.alloc(10, 2));
    const back = Buffer.alloc(10);
    await second.read(20, back);
    assert.deepEqual(back, Buffer.alloc(10, 3));
    await second.commit({});
    const data = await readFile(join(dir, "f"));
    assert.deepEqual(data, Buffer.concat([Buffer.alloc(10, 1), Buffer.alloc(10, 2), Buffer.alloc(10, 3)]));
    assert.deepEqual(await readdir(dir), ["f"]);
  });

  it("discard removes everything, unless asked to keep written ranges for --resume", async () => {
    const kept = new FileSink(join(dir, "k"));
    await kept.open(4, { etag: "x", size: 4 });
    await kept.write(0, 0, Buffer.from("ab"));
    assert.equal(await kept.discard(true), true);
    assert.deepEqual((await readdir(dir)).sort(), [".k.s3x-part", ".k.s3x-part.journal"]);

    const nothingWritten = new FileSink(join(dir, "n"));
    await nothingWritten.open(4, { etag: "x", size: 4 });
    assert.equal(await nothingWritten.discard(true), false, "nothing worth keeping");
    const removed = new FileSink(join(dir, "k"));
    await removed.forgetPrevious();
    assert.deepEqual(await readdir(dir), []);
  });

  it("open starts over: an earlier temporary file and journal are replaced", async () => {
    const old = new FileSink(join(dir, "s"));
    await old.open(4, { etag: "old", size: 4 });
    await old.write(0, 0, Buffer.from("zz"));
    await old.discard(true);
    const fresh = new FileSink(join(dir, "s"));
    await fresh.open(2, { etag: "new", size: 2 });
    assert.deepEqual((await fresh.previous())?.identity, { etag: "new", size: 2 });
    assert.deepEqual((await fresh.previous())?.done, []);
    await fresh.write(0, 0, Buffer.from("ok"));
    await fresh.commit({});
    assert.equal(await readFile(join(dir, "s"), "utf8"), "ok");
  });

  it("a leftover index finds an interrupted download's journal, answers none for the rest from one directory read, and stops answering once the sink has opened", async () => {
    const interrupted = new FileSink(join(dir, "a"));
    await interrupted.open(20, { etag: '"a"', size: 20 });
    await interrupted.write(0, 0, Buffer.alloc(10, 1));
    assert.equal(await interrupted.discard(true), true);
    const index = new LeftoverIndex();
    assert.deepEqual((await new FileSink(join(dir, "a"), index).previous())?.done, [{ offset: 0, length: 10 }]);
    const fresh = new FileSink(join(dir, "b"), index);
    assert.equal(await fresh.previous(), undefined);
    // A directory that does not exist yet holds nothing.
    assert.equal(await new FileSink(join(dir, "missing", "c"), index).previous(), undefined);
    // After this run's own sink wrote a journal, the (older) index must not hide it.
    await fresh.open(20, { etag: '"b"', size: 20 });
    await fresh.write(0, 0, Buffer.alloc(10, 2));
    assert.equal(await fresh.discard(true), true);
    assert.deepEqual((await fresh.previous())?.identity, { etag: '"b"', size: 20 });
  });
});
