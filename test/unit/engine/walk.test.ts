import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { walkFiles, type LocalEntry, type WalkProblem } from "../../../src/engine/walk.js";

async function walk(root: string, followSymlinks = true): Promise<{ files: LocalEntry[]; problems: WalkProblem[] }> {
  const files: LocalEntry[] = [];
  const problems: WalkProblem[] = [];
  for await (const entry of walkFiles(root, { followSymlinks, onProblem: (p) => problems.push(p) })) files.push(entry);
  return { files, problems };
}

describe("engine/walk", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-walk-"));
  });
  afterEach(async () => {
    await chmod(join(dir, "locked"), 0o755).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it("yields every file once, with its size, across more entries than one stat batch and nested folders", async () => {
    // 300 files in one folder: more than one batch of stats (128), with folders among them.
    const expected = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      await writeFile(join(dir, `f${i}`), Buffer.alloc(i));
      expected.set(`f${i}`, i);
    }
    await mkdir(join(dir, "a", "b"), { recursive: true });
    await writeFile(join(dir, "a", "one"), "1");
    await writeFile(join(dir, "a", "b", "two"), "22");
    expected.set("a/one", 1).set("a/b/two", 2);
    const { files, problems } = await walk(dir);
    assert.deepEqual(problems, []);
    assert.equal(files.length, expected.size);
    for (const file of files) {
      assert.equal(file.size, expected.get(file.relativePath), file.relativePath);
      assert.equal(file.absolutePath, join(dir, ...file.relativePath.split("/")));
      assert.ok(file.mtimeMs > 0);
    }
    assert.equal(new Set(files.map((f) => f.relativePath)).size, files.length, "no file twice");
  });

  it("follows symlinks by default, skips them when told, and reports a loop instead of recursing", async () => {
    await mkdir(join(dir, "real"));
    await writeFile(join(dir, "real", "data"), "abc");
    await symlink(join(dir, "real", "data"), join(dir, "link-to-file"));
    await symlink(dir, join(dir, "real", "back-to-root"));
    const followed = await walk(dir);
    assert.deepEqual(followed.files.map((f) => [f.relativePath, f.size]).sort(), [["link-to-file", 3], ["real/data", 3]]);
    assert.deepEqual(followed.problems.map((p) => p.relativePath), ["real/back-to-root"]);
    assert.match(followed.problems[0]!.message, /symlink loop/);

    const unfollowed = await walk(dir, false);
    assert.deepEqual(unfollowed.files.map((f) => f.relativePath), ["real/data"]);
    assert.deepEqual(unfollowed.problems, []);
  });

  it("skips FIFOs, reports a dangling link and an unreadable folder, and goes on", async () => {
    execFileSync("mkfifo", [join(dir, "pipe")]);
    await symlink(join(dir, "nowhere"), join(dir, "dangling"));
    await mkdir(join(dir, "locked"));
    await writeFile(join(dir, "locked", "secret"), "s");
    await chmod(join(dir, "locked"), 0o000);
    await writeFile(join(dir, "ok"), "ok");
    const { files, problems } = await walk(dir);
    const asRoot = process.getuid?.() === 0; // root reads a 000 folder anyway
    assert.deepEqual(files.map((f) => f.relativePath).sort(), asRoot ? ["locked/secret", "ok"] : ["ok"]);
    const reported = problems.map((p) => p.relativePath).sort();
    assert.deepEqual(reported, asRoot ? ["dangling"] : ["dangling", "locked"]);
    assert.match(problems.find((p) => p.relativePath === "dangling")!.message, /ENOENT/);
  });
});
