import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { DestinationBusyError } from "../../../src/engine/locks/exclusive-lock.js";
import { BlockingWrites } from "../../../src/engine/sinks/blocking-writes.js";
import { FileSink } from "../../../src/engine/sinks/file-sink.js";

/**
 * When a file sink takes its destination's lock: only once a journal is
 * involved (a ranged download, or a leftover found). A one-response object
 * needs none: its run renames its own uniquely named file, whole.
 */
describe("engine/sinks/file-sink: when the destination lock is taken", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-sink-lock-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [how, blocking] of [
    ["through the thread pool", undefined],
    ["with blocking calls", { smallFiles: new BlockingWrites() }],
  ] as const) {
    it(`a one-response object (${how}) creates no lock file: only its temporary file, then the destination`, async () => {
      const sink = new FileSink(join(dir, "f"), undefined, blocking);
      await sink.claim(() => undefined, true);
      assert.equal(await sink.previous(), undefined);
      await sink.open(4, { etag: "e", size: 4 }, false);
      assert.deepEqual(await readdir(dir), [basename(sink.tempPath)], "no .f.s3x-lock");
      await sink.write(0, 0, Buffer.from("abcd"));
      await sink.commit({});
      assert.deepEqual(await readdir(dir), ["f"]);
      assert.equal(await readFile(join(dir, "f"), "utf8"), "abcd");
    });
  }

  it("a one-response object that fails removes its own temporary file, and nothing of another run holding the lock", async () => {
    const ranged = new FileSink(join(dir, "f"));
    await ranged.claim(() => undefined, true);
    await ranged.open(8, { etag: "e", size: 8 });
    await ranged.write(0, 0, Buffer.from("ab"));
    const before = (await readdir(dir)).sort();
    assert.ok(before.includes(".f.s3x-lock"), "a ranged open takes the lock");
    const small = new FileSink(join(dir, "f"));
    await small.claim(() => undefined, true);
    await small.open(4, { etag: "x", size: 4 }, false);
    await small.write(0, 0, Buffer.from("wxyz"));
    assert.equal(await small.discard(), false);
    assert.deepEqual((await readdir(dir)).sort(), before);
    await ranged.write(1, 2, Buffer.from("cdefgh"));
    await ranged.commit({});
    assert.equal(await readFile(join(dir, "f"), "utf8"), "abcdefgh");
    assert.deepEqual(await readdir(dir), ["f"]);
  });

  it("a run that finds a live run's journal is refused by the lock before it reads or removes anything", async () => {
    const owner = new FileSink(join(dir, "f"));
    await owner.open(8, { etag: "e", size: 8 });
    await owner.write(0, 0, Buffer.from("ab"));
    const before = (await readdir(dir)).sort();
    const other = new FileSink(join(dir, "f"));
    await other.claim(() => undefined, true);
    await assert.rejects(other.previous(), DestinationBusyError);
    await other.forgetPrevious();
    assert.equal(await other.discard(true), false);
    assert.deepEqual((await readdir(dir)).sort(), before);
    await owner.discard();
    assert.deepEqual(await readdir(dir), []);
  });

  it("a leftover of a finished run is found under the lock, and the lock goes once it is dealt with", async () => {
    const first = new FileSink(join(dir, "f"));
    await first.open(8, { etag: "e", size: 8 });
    await first.write(0, 0, Buffer.from("abcd"));
    assert.equal(await first.discard(true), true);
    assert.ok(!(await readdir(dir)).includes(".f.s3x-lock"), "released when kept for --resume");
    const second = new FileSink(join(dir, "f"));
    await second.claim(() => undefined, true);
    assert.equal((await second.previous())?.location, first.tempPath);
    assert.ok((await readdir(dir)).includes(".f.s3x-lock"), "held while the leftover is dealt with");
    await second.forgetPrevious();
    await second.open(4, { etag: "y", size: 4 }, false);
    await second.write(0, 0, Buffer.from("wxyz"));
    await second.commit({});
    assert.deepEqual(await readdir(dir), ["f"]);
  });

  it("dropStaleJournal (after a skip) removes only a journal whose temporary file is gone, and never under a live run's lock", async () => {
    // A leftover still holding bytes: kept for the next download to report.
    const kept = new FileSink(join(dir, "f"));
    await kept.open(8, { etag: "e", size: 8 });
    await kept.write(0, 0, Buffer.from("abcd"));
    await kept.discard(true);
    const withBytes = (await readdir(dir)).sort();
    await new FileSink(join(dir, "f")).dropStaleJournal();
    assert.deepEqual((await readdir(dir)).sort(), withBytes);

    // A live run's journal: its lock keeps the skip's hands off, whatever the journal says.
    await rm(kept.tempPath);
    const live = new FileSink(join(dir, "g"));
    await live.open(8, { etag: "e", size: 8 });
    await writeFile(join(dir, ".g.s3x-part.journal"), JSON.stringify({ version: 2, etag: "e", size: 8, temp: ".g.gone.s3x-part" }) + "\n");
    await new FileSink(join(dir, "g")).dropStaleJournal();
    assert.ok((await readdir(dir)).includes(".g.s3x-part.journal"), "a live run's journal stays");
    await live.discard();

    // The stale one: its file was renamed into place before the kill.
    await new FileSink(join(dir, "f")).dropStaleJournal();
    assert.deepEqual(await readdir(dir), [], "the journal without its file is gone, and no lock is left");
  });
});
