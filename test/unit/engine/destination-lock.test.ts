import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { deadPid, holder } from "../../support/lock-records.js";
import { DestinationBusyError, type LockHolder } from "../../../src/engine/locks/exclusive-lock.js";
import { DestinationLock } from "../../../src/engine/sinks/destination-lock.js";
import { FileSink } from "../../../src/engine/sinks/file-sink.js";

describe("engine/sinks/destination-lock", () => {
  let dir: string;
  let debug: string[];
  const note = (line: string): void => void debug.push(line);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-lock-"));
    debug = [];
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("admits one holder: a second is refused with one line naming the first, and admitted once it is released", async () => {
    const first = new DestinationLock(join(dir, "f"));
    assert.equal(await first.acquire(".f.aaaaaaaa.s3x-part", note), undefined);
    const lockText = JSON.parse(await readFile(join(dir, ".f.s3x-lock"), "utf8")) as LockHolder;
    assert.equal(lockText.pid, process.pid);
    assert.equal(lockText.temp, ".f.aaaaaaaa.s3x-part");
    const second = new DestinationLock(join(dir, "f"));
    await assert.rejects(second.acquire(".f.bbbbbbbb.s3x-part", note), (err: Error) => {
      assert.ok(err instanceof DestinationBusyError);
      assert.match(err.message, new RegExp(`^${join(dir, "f")}: s3x process ${process.pid} \\(started [^)]+\\) is downloading to it \\(lock ${join(dir, ".f.s3x-lock")}\\); not touching it; wait for it to end$`));
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    await first.release();
    await second.acquire(".f.bbbbbbbb.s3x-part", note);
    assert.equal(second.held, true);
    await second.release(true);
    assert.deepEqual(await readdir(dir), []);
    assert.deepEqual(debug, []);
  });

  it("a lock from another host cannot be judged from here: refused, naming the host and the file to remove", async () => {
    await writeFile(join(dir, ".f.s3x-lock"), holder({ pid: 4242, host: "rank-7.example" }));
    await assert.rejects(new DestinationLock(join(dir, "f")).acquire(".f.eeeeeeee.s3x-part", note), /s3x process 4242 on host rank-7\.example \(started [^)]+\) is downloading to it \(lock \S+\); not touching it; remove \S+\.f\.s3x-lock if that process is gone$/);
  });

  it("an unreadable lock is being written if young, stale if old", async () => {
    const path = join(dir, ".f.s3x-lock");
    await writeFile(path, "");
    await assert.rejects(new DestinationLock(join(dir, "f")).acquire(".f.ffffffff.s3x-part", note), /another process is starting a download to it/);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(path, longAgo, longAgo);
    const lock = new DestinationLock(join(dir, "f"));
    assert.equal(await lock.acquire(".f.ffffffff.s3x-part", note), undefined, "no holder to report");
    assert.match(debug[0]!, /taking over the stale lock of a process that left it unreadable/);
    await lock.release();
  });

  describe("a file sink taking over a dead run's destination", () => {
    it("removes the dead run's temporary file when no journal names it (a small object killed mid-write)", async () => {
      await writeFile(join(dir, ".f.deadbeef.s3x-part"), "half");
      await writeFile(join(dir, ".f.s3x-lock"), holder({ pid: await deadPid(), temp: ".f.deadbeef.s3x-part" }));
      const sink = new FileSink(join(dir, "f"));
      await sink.claim(note);
      assert.deepEqual(await readdir(dir), [".f.s3x-lock"]);
      await sink.discard();
      assert.deepEqual(await readdir(dir), []);
    });

    it("keeps it when its journal names it: --resume continues it", async () => {
      await writeFile(join(dir, ".f.deadbeef.s3x-part"), "ab\0\0");
      await writeFile(join(dir, ".f.s3x-part.journal"), '{"version":2,"etag":"e","size":4,"temp":".f.deadbeef.s3x-part"}\n{"o":0,"n":2}\n');
      await writeFile(join(dir, ".f.s3x-lock"), holder({ pid: await deadPid(), temp: ".f.deadbeef.s3x-part" }));
      const sink = new FileSink(join(dir, "f"));
      await sink.claim(note);
      assert.equal((await sink.previous())?.location, join(dir, ".f.deadbeef.s3x-part"));
      await sink.reopen();
      await sink.write(1, 2, Buffer.from("cd"));
      await sink.commit({});
      assert.equal(await readFile(join(dir, "f"), "utf8"), "abcd");
      assert.deepEqual(await readdir(dir), ["f"]);
    });

    it("never removes a file a lock names outside the destination's own temporary names", async () => {
      await writeFile(join(dir, "precious"), "keep me");
      await writeFile(join(dir, ".f.s3x-lock"), holder({ pid: await deadPid(), temp: "precious" }));
      const sink = new FileSink(join(dir, "f"));
      await sink.claim(note);
      await sink.discard();
      assert.deepEqual(await readdir(dir), ["precious"]);
    });

    it("a sink refused the lock touches nothing: not the other run's file, journal or lock", async () => {
      const owner = new FileSink(join(dir, "f"));
      await owner.claim();
      await owner.open(4, { etag: "e", size: 4 });
      await owner.write(0, 0, Buffer.from("ab"));
      const before = (await readdir(dir)).sort();
      const other = new FileSink(join(dir, "f"));
      await assert.rejects(other.claim(), DestinationBusyError);
      await other.forgetPrevious();
      assert.equal(await other.discard(true), false);
      assert.deepEqual((await readdir(dir)).sort(), before);
      assert.ok(before.includes(basename(owner.tempPath)));
      await owner.write(1, 2, Buffer.from("cd"));
      await owner.commit({});
      assert.equal(await readFile(join(dir, "f"), "utf8"), "abcd");
    });
  });
});
