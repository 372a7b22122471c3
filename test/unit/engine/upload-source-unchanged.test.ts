import assert from "node:assert/strict";
import { appendFile, chmod, mkdtemp, open, rename, rm, stat, symlink, utimes, writeFile, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Stats } from "node:fs";
import { checkUnchanged } from "../../../src/engine/upload.js";

/**
 * The check an upload makes once it has read a file, before the object is
 * made: is the file still the one it started with? (The integration tests
 * change a file during a real multipart upload; these cover each kind of
 * change, and the single PUT's read, on their own.)
 */
describe("engine/upload: a file that changed since its upload started is not stored", () => {
  let dir: string;
  let path: string;
  let handle: FileHandle;
  let before: Stats;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-unchanged-"));
    path = join(dir, "f.bin");
    await writeFile(path, Buffer.alloc(4096, "A"));
    // Written a minute ago: a change now gets another timestamp, whatever the clock's tick.
    const past = new Date(Date.now() - 60_000);
    await utimes(path, past, past);
    handle = await open(path, "r");
    before = await handle.stat();
  });

  afterEach(async () => {
    await handle.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Waits until the file system's clock has ticked past the file's ctime
   * (a few ms: the kernel stamps files with a coarse clock), so that a
   * change now gets another ctime. Waits on the clock, not for a set time.
   */
  async function nextTick(): Promise<void> {
    const probe = join(dir, "tick");
    for (let i = 0; i < 100_000; i++) {
      await writeFile(probe, "");
      if ((await stat(probe)).ctimeMs > before.ctimeMs) return;
    }
    assert.fail("the file system's clock never moved");
  }

  const rejects = (byName: boolean, why: RegExp) =>
    assert.rejects(checkUnchanged(handle, path, before, { byName }), (err: Error & { code?: string }) => {
      assert.equal(err.code, "S3X_SOURCE_CHANGED");
      assert.ok(err.message.startsWith(`${path} changed while being uploaded (`), err.message);
      assert.match(err.message, why);
      return true;
    });

  it("accepts a file nobody touched", async () => {
    await checkUnchanged(handle, path, before, { byName: true });
    await checkUnchanged(handle, path, before, { byName: false });
  });

  it("refuses a file rewritten in place with the same size (a new mtime)", async () => {
    const writer = await open(path, "r+");
    await writer.write(Buffer.alloc(4096, "B"), 0, 4096, 0);
    await writer.close();
    await rejects(false, /it was modified/);
  });

  it("refuses a file appended to, or cut short (its size)", async () => {
    await appendFile(path, "more");
    await rejects(false, /its size went from 4096 to 4100 bytes/);
  });

  it("refuses a file whose mtime was set back after a write (its ctime still moved)", async () => {
    await nextTick();
    const writer = await open(path, "r+");
    await writer.write(Buffer.alloc(10, "B"), 0, 10, 0);
    await writer.close();
    await utimes(path, before.atime, before.mtime);
    await rejects(false, /status-change time \(ctime\) moved/);
  });

  it("refuses a file whose name now leads to another file (checked by name: a symbolic link pointed elsewhere)", async () => {
    const target = join(dir, "target.bin");
    const other = join(dir, "other.bin");
    const link = join(dir, "link.bin");
    await rename(path, target);
    await writeFile(other, Buffer.alloc(4096, "A"));
    await symlink(target, link);
    await handle.close();
    path = link;
    handle = await open(path, "r");
    before = await handle.stat();
    // The open file is untouched; only what its name leads to changes.
    await symlink(other, `${link}.new`);
    await rename(`${link}.new`, link);
    await checkUnchanged(handle, path, before, { byName: false });
    await rejects(true, /its name now leads to another file/);
  });

  it("a chmod moves the ctime too: refused (as tar does), the bytes may still be the same", async () => {
    await nextTick();
    await chmod(path, 0o600);
    await rejects(false, /ctime/);
  });
});
