import assert from "node:assert/strict";
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { BLOCKING_LIMIT_US, BlockingWrites, CREATE_LIMIT_US, RANGE_CALL_LIMIT_US } from "../../../src/engine/sinks/blocking-writes.js";
import { FileSink } from "../../../src/engine/sinks/file-sink.js";
import { MAX_WRITE_CALL } from "../../../src/engine/sinks/write-calls.js";
import { LeftoverIndex } from "../../../src/engine/sinks/leftover-index.js";
import { nodeFileSystem, type SinkFileSystem } from "../../../src/engine/sinks/range-journal.js";

/** The sink's temporary file name (unique per run: `.NAME.<random>.s3x-part`). */
const tempOf = (sink: FileSink): string => basename(sink.tempPath);

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
    assert.match(tempOf(sink), /^\.out\.bin\.[0-9a-f]{8}\.s3x-part$/);
    assert.deepEqual((await readdir(dir)).sort(), [tempOf(sink), ".out.bin.s3x-lock", ".out.bin.s3x-part.journal"].sort());
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
    await second.claim();
    const previous = await second.previous();
    assert.deepEqual(previous?.identity, { etag: '"abc"', size: 30 });
    assert.deepEqual(previous?.done, [
      { offset: 0, length: 10 },
      { offset: 20, length: 10 },
    ]);
    assert.equal(previous?.location, first.tempPath, "the journal names the first run's file");
    // Continue it: fill the gap, read back an earlier range, commit.
    await second.reopen();
    assert.equal(second.tempPath, first.tempPath, "adopted");
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
    assert.deepEqual((await readdir(dir)).sort(), [tempOf(kept), ".k.s3x-part.journal"].sort(), "kept, and the lock released");

    const nothingWritten = new FileSink(join(dir, "n"));
    await nothingWritten.open(4, { etag: "x", size: 4 });
    assert.equal(await nothingWritten.discard(true), false, "nothing worth keeping");
    const removed = new FileSink(join(dir, "k"));
    await removed.forgetPrevious();
    assert.equal((await readdir(dir)).length, 2, "only the lock's holder removes anything");
    await removed.claim();
    await removed.forgetPrevious();
    await removed.discard();
    assert.deepEqual(await readdir(dir), []);
  });

  it("open starts over: an earlier temporary file and journal are replaced", async () => {
    const old = new FileSink(join(dir, "s"));
    await old.open(4, { etag: "old", size: 4 });
    await old.write(0, 0, Buffer.from("zz"));
    await old.discard(true);
    const fresh = new FileSink(join(dir, "s"));
    await fresh.claim();
    assert.equal((await fresh.previous())?.location, old.tempPath);
    await fresh.open(2, { etag: "new", size: 2 });
    assert.deepEqual((await readdir(dir)).sort(), [tempOf(fresh), ".s.s3x-lock", ".s.s3x-part.journal"].sort(), "the old file went with its journal");
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

  it("continues a journal of an earlier release (no file name in it) in the fixed temporary file that release used", async () => {
    await writeFile(join(dir, ".v.s3x-part"), Buffer.from([0x61, 0x62, 0, 0]));
    await writeFile(join(dir, ".v.s3x-part.journal"), '{"version":1,"etag":"e","size":4}\n{"o":0,"n":2}\n');
    const sink = new FileSink(join(dir, "v"));
    await sink.claim();
    const previous = await sink.previous();
    assert.equal(previous?.location, join(dir, ".v.s3x-part"));
    assert.deepEqual(previous?.done, [{ offset: 0, length: 2 }]);
    await sink.reopen();
    await sink.write(1, 2, Buffer.from("cd"));
    await sink.commit({});
    assert.equal(await readFile(join(dir, "v"), "utf8"), "abcd");
    assert.deepEqual(await readdir(dir), ["v"]);
  });

  it("a journal whose file is gone (published just before a crash) is dropped, not reported", async () => {
    await writeFile(join(dir, ".g.s3x-part.journal"), '{"version":2,"etag":"e","size":4,"temp":".g.0badf00d.s3x-part"}\n{"o":0,"n":4}\n');
    const sink = new FileSink(join(dir, "g"));
    await sink.claim();
    assert.equal(await sink.previous(), undefined);
    await sink.discard();
    assert.deepEqual(await readdir(dir), []);
  });

  it("a journal naming a file outside its directory is not followed", async () => {
    await writeFile(join(dir, ".x.s3x-part.journal"), '{"version":2,"etag":"e","size":4,"temp":"../elsewhere"}\n');
    await writeFile(join(dir, ".x.s3x-part"), "abcd");
    const sink = new FileSink(join(dir, "x"));
    await sink.claim();
    assert.equal((await sink.previous())?.location, join(dir, ".x.s3x-part"), "taken as the fixed name instead");
    await sink.discard();
  });

  describe("ranged writes with blocking calls", () => {
    /** A policy that says what it was asked and told, with a fixed answer. */
    class ScriptedWrites extends BlockingWrites {
      readonly heard: number[] = [];
      constructor(private readonly block: boolean) {
        super(RANGE_CALL_LIMIT_US);
      }
      override shouldBlock(): boolean {
        return this.block;
      }
      override record(micros: number): void {
        this.heard.push(micros);
      }
    }

    for (const block of [true, false]) {
      it(`${block ? "a fast policy: each write call is made blocking and timed" : "a slow policy: writes go through the thread pool, untimed"}; the journal records every range either way`, async () => {
        const policy = new ScriptedWrites(block);
        const sink = new FileSink(join(dir, "r"), undefined, { ranges: policy }, { flush: { bytes: 1, ms: 3_600_000 } });
        await sink.claim();
        const part = Buffer.alloc(2 * MAX_WRITE_CALL + 1, 7);
        await sink.open(2 * part.length, { etag: '"r"', size: 2 * part.length });
        const journalPath = join(dir, ".r.s3x-part.journal");
        await sink.write(1, part.length, part);
        await sink.write(0, 0, part);
        assert.equal(policy.heard.length, block ? 6 : 0, "one timing per call of at most MAX_WRITE_CALL bytes");
        assert.ok(policy.heard.every((us) => us > 0 && us < 1e7), `timings ${policy.heard}`);
        await sink.discard(true); // interrupted: the journal is brought up to date and kept
        const ranges = (await readFile(journalPath, "utf8")).split("\n").filter((line) => line.includes('"o":'));
        assert.equal(ranges.length, 2, `both ranges journaled: ${ranges}`);
        const file = await readFile(join(dir, tempOf(sink)));
        assert.ok(file.equals(Buffer.concat([part, part])), "both ranges on disk, in place");
      });
    }
  });

  describe("one-response objects with blocking writes", () => {
    it("writes, timestamps and renames the file with blocking calls, with no journal; the policy hears how long that took", async () => {
      const heard: number[] = [];
      const policy = new (class extends BlockingWrites {
        override record(micros: number): void {
          heard.push(micros);
          super.record(micros);
        }
      })();
      const sink = new FileSink(join(dir, "w"), undefined, { smallFiles: policy });
      await sink.claim();
      await sink.open(5, { etag: '"e"', size: 5 }, false);
      assert.deepEqual((await readdir(dir)).sort(), [tempOf(sink), ".w.s3x-lock"].sort(), "no journal for a one-response object");
      await sink.write(0, 0, Buffer.from("fresh"));
      const back = Buffer.alloc(3);
      await sink.read(1, back);
      assert.equal(back.toString(), "res");
      await sink.commit({ lastModified: new Date("2021-05-06T07:08:09Z") });
      assert.deepEqual(await readdir(dir), ["w"]);
      assert.equal(await readFile(join(dir, "w"), "utf8"), "fresh");
      assert.equal((await stat(join(dir, "w"))).mtime.toISOString(), "2021-05-06T07:08:09.000Z");
      assert.equal(heard.length, 1);
      assert.ok(heard[0]! > 0 && heard[0]! < 1e6, `measured ${heard[0]} µs`);
    });

    it("a slow create goes through the thread pool and the calls after it still block; the create policy times only blocking creates", async () => {
      const pooled: string[] = [];
      const blockingWrites: number[] = [];
      const fileSystem: SinkFileSystem = {
        ...nodeFileSystem,
        openFd: (path, flags, mode) => {
          pooled.push(path);
          return nodeFileSystem.openFd(path, flags, mode);
        },
        writeSync: (fd, data, offset, length, position) => {
          blockingWrites.push(length);
          return nodeFileSystem.writeSync(fd, data, offset, length, position);
        },
      };
      const creates = new (class extends BlockingWrites {
        readonly heard: number[] = [];
        constructor(public block: boolean) {
          super(CREATE_LIMIT_US);
        }
        override shouldBlock(): boolean {
          return this.block;
        }
        override record(micros: number): void {
          this.heard.push(micros);
        }
      })(false);
      const smallFiles = new BlockingWrites();
      for (const name of ["pooled", "blocking"]) {
        creates.block = name === "blocking";
        const sink = new FileSink(join(dir, name), undefined, { smallFiles, creates }, { fileSystem });
        await sink.open(4, { etag: `"${name}"`, size: 4 }, false);
        await sink.write(0, 0, Buffer.from(name.slice(0, 4)));
        await sink.commit({ lastModified: new Date("2022-01-02T03:04:05Z") });
        assert.equal(await readFile(join(dir, name), "utf8"), name.slice(0, 4));
        assert.equal((await stat(join(dir, name))).mtime.toISOString(), "2022-01-02T03:04:05.000Z");
      }
      assert.equal(pooled.length, 1, "only the slow policy's create went to the pool");
      assert.match(basename(pooled[0]!), /^\.pooled\.[0-9a-f]{8}\.s3x-part$/);
      assert.deepEqual(blockingWrites, [4, 4], "both files' bytes written with blocking calls");
      assert.equal(creates.heard.length, 1, "one timing: the blocking create");
      assert.deepEqual((await readdir(dir)).sort(), ["blocking", "pooled"]);
    });

    it("discard leaves nothing; a directory in the way is a path clash, with nothing left behind", async () => {
      const failed = new FileSink(join(dir, "d"), undefined, { smallFiles: new BlockingWrites() });
      await failed.open(3, { etag: "x", size: 3 }, false);
      await failed.write(0, 0, Buffer.from("abc"));
      assert.equal(await failed.discard(true), false, "one response: nothing to resume");
      assert.deepEqual(await readdir(dir), []);

      await mkdir(join(dir, "taken", "child"), { recursive: true });
      const clash = new FileSink(join(dir, "taken"), undefined, { smallFiles: new BlockingWrites() });
      await clash.open(2, { etag: "y", size: 2 }, false);
      await clash.write(0, 0, Buffer.from("hi"));
      await assert.rejects(clash.commit({}), (err: NodeJS.ErrnoException) => err.code === "S3X_PATH_CLASH" && /a local directory of that name is in the way/.test(err.message));
      await clash.discard();
      assert.deepEqual(await readdir(dir), ["taken"]);
    });

    it("resumable downloads keep their journal whatever the small-file policy says", async () => {
      const policy = new BlockingWrites();
      const sink = new FileSink(join(dir, "big"), undefined, { smallFiles: policy });
      await sink.open(4, { etag: "z", size: 4 }, true);
      assert.deepEqual((await readdir(dir)).sort(), [tempOf(sink), ".big.s3x-lock", ".big.s3x-part.journal"].sort());
      await sink.write(0, 0, Buffer.from("data"));
      await sink.commit({});
      assert.equal(await readFile(join(dir, "big"), "utf8"), "data");
    });

    it("the policy blocks while files are fast, goes to the thread pool once every recent file was slow, and probes again now and then", () => {
      const policy = new BlockingWrites();
      const slow = BLOCKING_LIMIT_US * 3;
      assert.equal(policy.shouldBlock(), true, "blocks until it has measured");
      // Slow files in bursts (a preempted thread) do not switch it while one recent file was fast.
      policy.record(100);
      for (let i = 0; i < 7; i++) policy.record(slow);
      assert.equal(policy.shouldBlock(), true);
      policy.record(slow); // now the last eight were all slow
      const answers = Array.from({ length: 100 }, () => policy.shouldBlock());
      assert.equal(answers.filter(Boolean).length, 2, "one probe per 50 files");
      assert.equal(answers.indexOf(true), 49);
      // A probe that comes back fast switches it back.
      policy.record(50);
      assert.ok(Array.from({ length: 20 }, () => policy.shouldBlock()).every(Boolean));
    });
  });
});
