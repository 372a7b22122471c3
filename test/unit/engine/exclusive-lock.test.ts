import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deadPid, holder } from "../../support/lock-records.js";
import { DestinationBusyError, ExclusiveLock, type LockHolder } from "../../../src/engine/locks/exclusive-lock.js";

/** A lock at `dir/.f.s3x-lock` (where the download tests put theirs), refusing with a plain message. */
const lockIn = (dir: string): ExclusiveLock => new ExclusiveLock(join(dir, ".f.s3x-lock"), (holder, verdict) => `busy: ${holder?.pid ?? "unreadable"} ${verdict}`);

describe("engine/locks/exclusive-lock", () => {
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

  it("takes over the lock of a dead process, and says so for --debug", async () => {
    const pid = await deadPid();
    await writeFile(join(dir, ".f.s3x-lock"), holder({ pid, temp: ".f.deadbeef.s3x-part" }));
    const lock = lockIn(dir);
    const dead = await lock.acquire(".f.cccccccc.s3x-part", note);
    assert.equal(dead?.pid, pid);
    assert.equal(dead?.temp, ".f.deadbeef.s3x-part");
    assert.equal(debug.length, 1);
    assert.match(debug[0]!, new RegExp(`\\.f\\.s3x-lock: taking over the stale lock of s3x process ${pid} \\(started 2026-01-01T00:00:00.000Z\\), which is no longer running`));
    assert.equal((JSON.parse(await readFile(join(dir, ".f.s3x-lock"), "utf8")) as LockHolder).temp, ".f.cccccccc.s3x-part");
    await lock.release();
  });

  it("a pid that now runs another program (reused after a crash) is dead to the lock", async () => {
    await writeFile(join(dir, ".f.s3x-lock"), holder({ pid: process.pid, command: "/nowhere/s3x.js" }));
    const lock = lockIn(dir);
    assert.equal((await lock.acquire(".f.dddddddd.s3x-part", note))?.command, "/nowhere/s3x.js");
    await lock.release();
  });

  it("two runs taking over one stale lock at once: one gets it, the other is refused", async () => {
    await writeFile(join(dir, ".f.s3x-lock"), holder({ pid: await deadPid() }));
    const results = await Promise.allSettled([0, 1].map((i) => lockIn(dir).acquire(`.f.${i}${i}${i}${i}${i}${i}${i}${i}.s3x-part`, note)));
    assert.deepEqual(results.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    assert.ok(refused.reason instanceof DestinationBusyError, String(refused.reason));
    assert.deepEqual((await readdir(dir)).sort(), [".f.s3x-lock"], "no renamed-aside lock left over");
  });

  it("a lock from another host is refused with the holder, whose message its user words", async () => {
    await writeFile(join(dir, ".f.s3x-lock"), holder({ pid: 4242, host: "rank-7.example" }));
    await assert.rejects(lockIn(dir).acquire("", note), (err: Error) => err instanceof DestinationBusyError && err.pid === 4242 && err.message === "busy: 4242 other-host");
  });
});
