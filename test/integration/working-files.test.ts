import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chown, lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { assertExitedPromptly, fileHash, randomFile, runS3x, sha256 } from "../support/cli.js";
import { freshBucket, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startThrottleProxy } from "../support/throttle-proxy.js";

const MiB = 1024 * 1024;
const run = promisify(execFile);

/**
 * The files a download keeps beside its destination (temporary file,
 * journal, lock) and the directories it creates, through the real CLI
 * against radosgw: working files s3x did not make are never used, renamed
 * or removed; its own are private until published and never left behind by
 * a full disk; and a read-only file system is named as such.
 * Mounting tmpfs, chown and planting files as another user need root.
 */
describe("working files and local directories (integration, real radosgw)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;

  before(async function () {
    if (process.getuid?.() !== 0) {
      if (process.env.CI) throw new Error("the working-file tests need root in CI");
      this.skip();
    }
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "workfiles");
    dir = await mkdtemp(join(tmpdir(), "s3x-workfiles-"));
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cp = (args: string[], env: NodeJS.ProcessEnv = s3.env) => runS3x(["cp", ...args, "--endpoint-url", s3.endpoint], { env, timeoutMs: 60_000 });

  /** What a path is, without following a link: compared before and after a run. */
  async function stateOf(path: string): Promise<string> {
    const s = await lstat(path);
    if (s.isSymbolicLink()) return `symlink to ${await readlink(path)}`;
    if (s.isFIFO()) return `fifo uid ${s.uid}`;
    return `file uid ${s.uid} mode ${(s.mode & 0o777).toString(8)} sha256 ${await fileHash(path)}`;
  }

  describe("--resume and planted working files", () => {
    const SIZE = 16 * MiB;
    const TEMP = ".f.bin.0badc0de.s3x-part";
    let etag: string;

    before(async () => {
      await putTestObject(s3, bucket, "planted.bin", randomBytes(SIZE));
      etag = (await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "planted.bin" }))).ETag!;
    });

    /** A journal as another user would plant it: the object's real ETag, its first 8 MiB "done", naming TEMP. */
    const journalText = (): string => JSON.stringify({ version: 2, etag, size: SIZE, temp: TEMP }) + "\n" + JSON.stringify({ o: 0, n: 8 * MiB }) + "\n";

    /** The planting of each case, into `out`; returns the paths whose state must not change. */
    const cases: { name: string; reason: RegExp; plant: (out: string, elsewhere: string) => Promise<string[]> }[] = [
      {
        name: "a journal and a temporary file that is a symbolic link to a root-only file",
        reason: /\.s3x-part is a symbolic link: it is not a working file s3x made/,
        plant: async (out, elsewhere) => {
          const victim = join(elsewhere, "victim");
          await writeFile(victim, randomBytes(64 * 1024), { mode: 0o600 });
          await writeFile(join(out, ".f.bin.s3x-part.journal"), journalText());
          await symlink(victim, join(out, TEMP));
          return [victim, join(out, TEMP), join(out, ".f.bin.s3x-part.journal")];
        },
      },
      {
        name: "a temporary file of another user (uid 65534)",
        reason: /\.s3x-part belongs to uid 65534, not to this user \(uid 0\)/,
        plant: async (out) => {
          await writeFile(join(out, ".f.bin.s3x-part.journal"), journalText());
          await writeFile(join(out, TEMP), randomBytes(SIZE));
          await chown(join(out, TEMP), 65534, 65534);
          return [join(out, TEMP), join(out, ".f.bin.s3x-part.journal")];
        },
      },
      {
        name: "a journal that is a symbolic link",
        reason: /\.s3x-part\.journal is a symbolic link/,
        plant: async (out, elsewhere) => {
          const journal = join(elsewhere, "journal");
          await writeFile(journal, journalText());
          await symlink(journal, join(out, ".f.bin.s3x-part.journal"));
          await writeFile(join(out, TEMP), randomBytes(SIZE));
          return [journal, join(out, ".f.bin.s3x-part.journal"), join(out, TEMP)];
        },
      },
      {
        name: "a temporary file that is a FIFO",
        reason: /\.s3x-part is a FIFO/,
        plant: async (out) => {
          await writeFile(join(out, ".f.bin.s3x-part.journal"), journalText());
          await run("mkfifo", [join(out, TEMP)]);
          return [join(out, TEMP), join(out, ".f.bin.s3x-part.journal")];
        },
      },
      {
        name: "a journal that is a FIFO (nothing blocks on it)",
        reason: /\.s3x-part\.journal is a FIFO/,
        plant: async (out) => {
          await run("mkfifo", [join(out, ".f.bin.s3x-part.journal")]);
          return [join(out, ".f.bin.s3x-part.journal")];
        },
      },
    ];

    for (const { name, reason, plant } of cases) {
      for (const resume of [true, false]) {
        it(`${name}${resume ? " (--resume)" : " (no --resume)"}: refused with the reason, nothing touched, nothing renamed`, async () => {
          const out = await mkdtemp(join(dir, "planted-"));
          const elsewhere = await mkdtemp(join(dir, "elsewhere-"));
          const watched = await plant(out, elsewhere);
          const before = await Promise.all(watched.map(stateOf));
          const namesBefore = (await readdir(out)).sort();
          const res = await cp([`s3://${bucket}/planted.bin`, join(out, "f.bin"), ...(resume ? ["--resume"] : [])]);
          assert.equal(res.code, 1, res.stderr);
          assertExitedPromptly(res);
          assert.match(res.stderr, reason);
          assert.deepEqual(await Promise.all(watched.map(stateOf)), before, "the planted files and what they point to are untouched");
          assert.deepEqual((await readdir(out)).sort(), namesBefore, "nothing renamed to f.bin, nothing left beside it");
        });
      }
    }
  });

  it("working files are created 0600; the published file gets the usual mode", async () => {
    const data = randomBytes(12 * MiB);
    await putTestObject(s3, bucket, "private.bin", data);
    await putTestObject(s3, bucket, "small.bin", Buffer.from("small"));
    const out = await mkdtemp(join(dir, "private-"));
    const proxy = await startThrottleProxy(s3.host, s3.port, 4 * MiB);
    try {
      // Held after 2 MiB: the first ranges are on disk, the temporary file and journal exist.
      proxy.holdAfter(2 * MiB);
      let modes: string[] = [];
      const res = await runS3x(["cp", `s3://${bucket}/private.bin`, join(out, "f.bin"), "--endpoint-url", proxy.endpoint, "--part-size", "1MiB", "--concurrency", "2"], {
        env: s3.env,
        timeoutMs: 60_000,
        onSpawn: (child) => {
          child.stdin!.end();
          void (async () => {
            await proxy.whenHolding();
            const names = (await readdir(out)).sort();
            modes = await Promise.all(names.map(async (n) => `${n.replace(/[0-9a-f]{8}/, "X")} ${((await stat(join(out, n))).mode & 0o777).toString(8)}`));
            proxy.setRate(0);
            proxy.release();
          })();
        },
      });
      assert.equal(res.code, 0, res.stderr);
      assert.deepEqual(modes, [".f.bin.X.s3x-part 600", ".f.bin.s3x-lock 644", ".f.bin.s3x-part.journal 600"]);
      const usual = (0o644 & ~process.umask()).toString(8);
      assert.equal(((await stat(join(out, "f.bin"))).mode & 0o777).toString(8), usual);
      assert.equal(await fileHash(join(out, "f.bin")), sha256(data));
      const small = await cp([`s3://${bucket}/small.bin`, join(out, "small.bin")]);
      assert.equal(small.code, 0, small.stderr);
      assert.equal(((await stat(join(out, "small.bin"))).mode & 0o777).toString(8), usual);
    } finally {
      await proxy.close();
    }
  });

  /** A tmpfs mounted for one test (`options`: mount options), unmounted after. */
  async function withTmpfs(options: string, body: (mnt: string) => Promise<void>): Promise<void> {
    const mnt = await mkdtemp(join(tmpdir(), "s3x-workfiles-mnt-"));
    await run("mount", ["-t", "tmpfs", "-o", options, "tmpfs", mnt]);
    try {
      await body(mnt);
    } finally {
      await run("umount", [mnt]);
      await rm(mnt, { recursive: true, force: true });
    }
  }

  it("a recursive download into a full disk leaves no lock files (nor anything else)", async () => {
    for (let i = 0; i < 4; i++) await putTestObject(s3, bucket, `full/o${i}.bin`, randomBytes(2 * MiB));
    await withTmpfs("size=1m", async (mnt) => {
      const out = join(mnt, "out");
      await mkdir(out);
      // Every block taken: creating a file still works, writing a byte into it does not.
      const filler = await open(join(mnt, "filler"), "w");
      try {
        for (;;) await filler.write(Buffer.alloc(64 * 1024));
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, "ENOSPC");
      } finally {
        await filler.close();
      }
      // Looked at once the run printed its summary: every object's clean-up is over by then. (The
      // process itself may linger on an idle connection after failed downloads, a matter of how
      // s3x exits, not of its files: it is ended here rather than waited for.)
      let left: Promise<string[]> | undefined;
      const res = await runS3x(["cp", "--recursive", `s3://${bucket}/full/`, out, "--part-size", "1MiB", "--endpoint-url", s3.endpoint], {
        env: s3.env,
        timeoutMs: 60_000,
        onSpawn: (child) => {
          child.stdin!.end();
          let stderr = "";
          child.stderr!.on("data", (chunk: Buffer) => {
            stderr += chunk.toString();
            if (left !== undefined || !/ 4 failed in /.test(stderr)) return;
            left = readdir(out);
            void left.finally(() => child.kill("SIGKILL"));
          });
        },
      });
      assert.match(res.stderr, /( no space left on device \(disk full\)\n.*){4}/s);
      assert.match(res.stderr, /cp: 0 transferred \(0 B\), 0 deleted, 0 skipped, 4 failed in /);
      assert.ok(left, `the run printed no summary: ${res.stderr}`);
      assert.deepEqual(await left, [], "no lock file (nor anything else) left in the full directory");
    });
  });

  it("a missing directory on a read-only file system is reported as such, not as missing", async () => {
    await putTestObject(s3, bucket, "ro/d/x.bin", Buffer.from("x"));
    await withTmpfs("size=1m,ro", async (mnt) => {
      // One object into a missing subdirectory.
      const one = await cp([`s3://${bucket}/ro/d/x.bin`, join(mnt, "sub", "x.bin")]);
      assert.equal(one.code, 1, one.stderr);
      assertExitedPromptly(one);
      assert.match(one.stderr, new RegExp(`${join(mnt, "sub")}: read-only file system\\n$`));
      // A recursive download: its missing root, and a missing directory under an existing root.
      const root = await cp(["--recursive", `s3://${bucket}/ro/`, join(mnt, "tree")]);
      assert.equal(root.code, 1, root.stderr);
      assertExitedPromptly(root);
      assert.match(root.stderr, new RegExp(`${join(mnt, "tree")}: read-only file system\\n$`));
      const under = await cp(["--recursive", `s3://${bucket}/ro/`, mnt]);
      assert.equal(under.code, 1, under.stderr);
      assertExitedPromptly(under);
      assert.match(under.stderr, new RegExp(`${join(mnt, "d")}: read-only file system\\n`));
      assert.doesNotMatch(one.stderr + root.stderr + under.stderr, /no such file or directory/);
    });
  });

  it("a read-only state directory stops a multipart upload with the real reason", async () => {
    const src = join(dir, "up.bin");
    await randomFile(src, 11 * MiB);
    await withTmpfs("size=1m,ro", async (mnt) => {
      const state = join(mnt, "state");
      const res = await cp([src, `s3://${bucket}/ro-state.bin`, "--part-size", "5MiB", "--multipart-threshold", "5MiB"], { ...s3.env, S3X_STATE_DIR: state });
      assert.equal(res.code, 1, res.stderr);
      assertExitedPromptly(res);
      assert.match(res.stderr, new RegExp(`${state}: read-only file system\\n$`));
      assert.equal(await openUploads(s3, bucket), 0);
    });
    assert.equal(await readFile(src).then((b) => b.length), 11 * MiB);
  });
});
