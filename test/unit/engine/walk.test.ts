import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PathStats, walkFiles, type LocalEntry, type WalkProblem } from "../../../src/engine/walk.js";

/** How the walk stats: through the thread pool, synchronously, or synchronously until transfers start (every other batch). */
const MODES: { name: string; mayBlock: (() => () => boolean) | undefined }[] = [
  { name: "thread-pool stats", mayBlock: undefined },
  { name: "synchronous stats", mayBlock: () => () => true },
  {
    name: "synchronous stats only while allowed",
    mayBlock: () => {
      let calls = 0;
      return () => calls++ % 2 === 0;
    },
  },
];

for (const mode of MODES) describe(`engine/walk (${mode.name})`, () => {
  async function walk(root: string, followSymlinks = true): Promise<{ files: LocalEntry[]; problems: WalkProblem[] }> {
    const files: LocalEntry[] = [];
    const problems: WalkProblem[] = [];
    for await (const entry of walkFiles(root, { followSymlinks, onProblem: (p) => problems.push(p), mayBlock: mode.mayBlock?.() })) files.push(entry);
    return { files, problems };
  }

  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-walk-"));
  });
  afterEach(async () => {
    await chmod(join(dir, "locked"), 0o755).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it("leaves out s3x's own working files (another run's temporary file, journal and lock), keeps the user's dot files", async () => {
    await mkdir(join(dir, "sub"));
    const working = [".a.bin.1f2e3d4c.s3x-part", ".a.bin.s3x-part", ".a.bin.s3x-part.journal", ".a.bin.s3x-lock", "sub/.b.s3x-lock", "sub/.b.s3x-lock.stale-12-ab"];
    const mine = [".env", "a.bin", "sub/b", "sub/x.s3x-lock", ".s3x-lock"];
    for (const name of [...working, ...mine]) await writeFile(join(dir, name), "x");
    const { files } = await walk(dir);
    assert.deepEqual(files.map((f) => f.relativePath).sort(), [...mine].sort());
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

  it("skips a FIFO and a dangling link with a warning, reports an unreadable folder, and goes on", async () => {
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
    assert.deepEqual(reported, asRoot ? ["dangling", "pipe"] : ["dangling", "locked", "pipe"]);
    // aws-cli's warnings: skipped, not failed.
    assert.deepEqual(problems.find((p) => p.relativePath === "dangling"), { relativePath: "dangling", message: "File does not exist.", skipped: true });
    assert.deepEqual(problems.find((p) => p.relativePath === "pipe"), { relativePath: "pipe", message: "File is character special device, block special device, FIFO, or socket.", skipped: true });
  });
});

describe("engine/walk: synchronous stats", () => {
  it("a slow batch of stats ends synchronous stats for the rest of the walk, which still yields every file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "s3x-walk-"));
    try {
      for (let i = 0; i < 300; i++) await writeFile(join(dir, `f${i}`), Buffer.alloc(i % 7));
      let asked = 0;
      const files: LocalEntry[] = [];
      // Every stat counts as slow: after the first batch (128 of 300 files) mayBlock is never asked again.
      for await (const entry of walkFiles(dir, { followSymlinks: true, onProblem: () => undefined, mayBlock: () => (asked++, true), slowStatMs: -1 })) files.push(entry);
      assert.equal(asked, 1);
      assert.equal(files.length, 300);
      assert.equal(new Set(files.map((f) => f.relativePath)).size, 300);
      for (const f of files) assert.equal(f.size, Number(f.relativePath.slice(1)) % 7);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("engine/walk: PathStats", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-stats-"));
    await writeFile(join(dir, "file"), "12345");
    await mkdir(join(dir, "sub"));
    await symlink(join(dir, "file"), join(dir, "link"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [name, mayBlock] of [["synchronously", () => true], ["through the thread pool", () => false]] as const) {
    it(`stats files, folders and followed links, and gives undefined for what is missing (${name})`, async () => {
      const stats = new PathStats(mayBlock);
      assert.equal((await stats.stat(join(dir, "file")))?.size, 5);
      assert.equal((await stats.stat(join(dir, "link")))?.size, 5);
      assert.equal((await stats.stat(join(dir, "sub")))?.isDirectory(), true);
      assert.equal(await stats.stat(join(dir, "missing")), undefined);
      assert.equal(await stats.stat(join(dir, "file", "below-a-file")), undefined);
    });
  }

  it("goes back to the thread pool for good once stats average slow, and asks mayBlock only until then", async () => {
    let asked = 0;
    const stats = new PathStats(() => (asked++, true), -1);
    for (let i = 0; i < 100; i++) assert.equal((await stats.stat(join(dir, "file")))?.size, 5);
    assert.equal(asked, 32, "judged after 32 stats, then never asked again");
  });
});
