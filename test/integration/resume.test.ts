import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListMultipartUploadsCommand, ListObjectsV2Command, ListPartsCommand } from "@aws-sdk/client-s3";
import { fileHash, randomFile, runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, objectHash, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startThrottleProxy, type ThrottleProxy } from "../support/throttle-proxy.js";
import { saveUploadRecord } from "../../src/engine/resume/upload-journal.js";

const MiB = 1024 * 1024;
const PART = 5 * MiB;

function stats(res: RunResult): Record<string, number> {
  return JSON.parse(res.stdout.toString().trim().split("\n").pop() ?? "") as Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * kill -9 half-way, then the same command with --resume: the result is
 * byte-identical and only what was missing crosses the network again (s3x's
 * own byte counters, checked against what the server had stored). A
 * throttling TCP proxy in front of the real radosgw slows the first run down
 * enough to kill it in the middle.
 */
describe("resume after kill -9 (integration, real radosgw)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let proxy: ThrottleProxy;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "resume");
    dir = await mkdtemp(join(tmpdir(), "s3x-resume-"));
    env = { ...s3.env, S3X_STATE_DIR: join(dir, "state") };
    // 4 connections × 12 MB/s: 200 MiB take ~4–5 s, long enough to interrupt.
    proxy = await startThrottleProxy(s3.host, s3.port, 12 * MiB);
  });

  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // Every run goes through the proxy (one endpoint, as a user's would be):
  // slowed while it is to be killed, full speed for the run that resumes.
  const slowArgs = (): string[] => ["--endpoint-url", proxy.endpoint, "--concurrency", "4", "--part-size", "5MiB"];
  const fast = (args: string[]): string[] => {
    proxy.setRate(0);
    proxy.release();
    return [...args, "--endpoint-url", proxy.endpoint];
  };

  /**
   * Runs s3x and SIGKILLs it once `progressed()` says it is at least half-way.
   * The proxy holds the transfer two parts before its end, so however the
   * machine's load skews the run against the polling, it cannot finish first
   * (4 parts in flight: at least half is stored by then).
   */
  async function killHalfway(args: string[], progressed: () => Promise<number>, total: number): Promise<void> {
    proxy.setRate(12 * MiB);
    proxy.holdAfter(total - 2 * PART);
    let killedAt = 0;
    const res = await runS3x(args, {
      env,
      onSpawn: (child: ChildProcess) => {
        child.stdin!.end();
        void (async () => {
          for (;;) {
            await sleep(100);
            if (child.exitCode !== null) return;
            const done = await progressed().catch(() => 0);
            if (done >= total / 2) {
              killedAt = done;
              child.kill("SIGKILL");
              return;
            }
          }
        })();
      },
    });
    assert.equal(res.signal, "SIGKILL", `expected a kill half-way; the run ended first: ${res.stderr}`);
    assert.ok(killedAt < total, "killed before the end");
  }

  /** Bytes the server holds for a key: the object if complete, else the parts of its open upload(s). */
  async function storedBytes(prefix: string): Promise<number> {
    let bytes = 0;
    const objects = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    for (const o of objects.Contents ?? []) bytes += o.Size ?? 0;
    const uploads = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    for (const u of uploads.Uploads ?? []) {
      const parts = await s3.client.send(new ListPartsCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }));
      for (const p of parts.Parts ?? []) bytes += p.Size ?? 0;
    }
    return bytes;
  }

  /** Bytes on disk according to the download journals under `root` (ranges from their lines). */
  async function journaledBytes(root: string): Promise<number> {
    let bytes = 0;
    const walk = async (d: string): Promise<void> => {
      for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
        const path = join(d, e.name);
        if (e.isDirectory()) await walk(path);
        else if (e.name.endsWith(".s3x-part.journal")) {
          const lines = (await readFile(path, "utf8")).split("\n");
          // Killed between its rename and the journal's removal: the file is counted whole below.
          const temp = (JSON.parse(lines[0]!) as { temp: string }).temp;
          if (!(await stat(join(d, temp)).then(() => true, () => false))) continue;
          for (const line of lines.slice(1)) {
            const m = /"n":(\d+)/.exec(line);
            if (m) bytes += Number(m[1]);
          }
        } else if (!e.name.startsWith(".")) {
          bytes += (await import("node:fs/promises").then((fs) => fs.stat(path))).size;
        }
      }
    };
    await walk(root);
    return bytes;
  }

  it("a 200 MiB upload: --resume sends only the missing parts and the object is identical", async () => {
    const src = join(dir, "up.bin");
    const hash = await randomFile(src, 200 * MiB);
    const dest = `s3://${bucket}/up/one.bin`;
    await killHalfway(["cp", src, dest, ...slowArgs()], () => storedBytes("up/"), 200 * MiB);
    const stored = await storedBytes("up/");
    assert.equal(await openUploads(s3, bucket), 1, "the killed upload is still open");

    // Without --resume the interrupted upload is reported (then a fresh one runs: not here).
    // No --part-size this time: the upload keeps the 5 MiB parts it was started with.
    const res = await runS3x(fast(["cp", src, dest, "--resume", "--json"]), { env });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /resuming upload \S+ of s3:\/\/\S+\/up\/one\.bin: \d+ parts \(\d+ bytes\) already stored/);
    const s = stats(res);
    const missing = 200 * MiB - stored;
    assert.ok(s.bytesSent <= missing + PART, `sent ${s.bytesSent} bytes; ${missing} were missing`);
    assert.ok(s.reusedBytes >= stored - PART, `reused ${s.reusedBytes} of ${stored} stored bytes`);
    assert.equal(await objectHash(s3, bucket, "up/one.bin"), hash);
    assert.equal(await openUploads(s3, bucket), 0, "no multipart upload left");
    assert.deepEqual(await readdir(join(dir, "state", "uploads")), [], "the local record is gone");
  });

  it("a 200 MiB download: --resume fetches only the missing ranges and the file is identical", async () => {
    const data = (await import("node:crypto")).randomBytes(200 * MiB);
    await putTestObject(s3, bucket, "down/one.bin", data);
    const out = join(dir, "down-one");
    await mkdir(out);
    await killHalfway(["cp", `s3://${bucket}/down/one.bin`, join(out, "one.bin"), ...slowArgs()], () => journaledBytes(out), 200 * MiB);
    const onDisk = await journaledBytes(out);
    assert.ok((await readdir(out)).includes(".one.bin.s3x-part.journal"), "the journal survived kill -9");

    const res = await runS3x(fast(["cp", `s3://${bucket}/down/one.bin`, join(out, "one.bin"), "--resume", "--json"]), { env });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /resuming the download of \S+: \d+ of 209715200 bytes already on disk/);
    const s = stats(res);
    const missing = 200 * MiB - onDisk;
    assert.ok(s.bytesReceived <= missing + PART, `received ${s.bytesReceived} bytes; ${missing} were missing`);
    assert.equal(s.reusedBytes, onDisk);
    assert.equal(await fileHash(join(out, "one.bin")), (await import("node:crypto")).createHash("sha256").update(data).digest("hex"));
    assert.deepEqual(await readdir(out), ["one.bin"], "no temporary file or journal left");
  });

  it("recursive upload of 4 × 50 MiB: finished files are skipped, unfinished ones resume", async () => {
    const src = join(dir, "tree-up");
    await mkdir(src);
    const hashes = new Map<string, string>();
    for (let i = 0; i < 4; i++) hashes.set(`f${i}.bin`, await randomFile(join(src, `f${i}.bin`), 50 * MiB));
    const dest = `s3://${bucket}/tree-up/`;
    await killHalfway(["cp", src, dest, "--recursive", ...slowArgs()], () => storedBytes("tree-up/"), 200 * MiB);
    const stored = await storedBytes("tree-up/");

    const res = await runS3x(fast(["cp", src, dest, "--recursive", "--part-size", "5MiB", "--resume", "--json"]), { env });
    assert.equal(res.code, 0, res.stderr);
    const s = stats(res);
    const missing = 200 * MiB - stored;
    assert.ok(s.bytesSent <= missing + PART, `sent ${s.bytesSent} bytes; ${missing} were missing`);
    for (const [name, hash] of hashes) assert.equal(await objectHash(s3, bucket, `tree-up/${name}`), hash, name);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("recursive download of 4 × 50 MiB: finished files are skipped, unfinished ones resume", async () => {
    const { randomBytes, createHash } = await import("node:crypto");
    const hashes = new Map<string, string>();
    for (let i = 0; i < 4; i++) {
      const data = randomBytes(50 * MiB);
      hashes.set(`f${i}.bin`, createHash("sha256").update(data).digest("hex"));
      await putTestObject(s3, bucket, `tree-down/f${i}.bin`, data);
    }
    const out = join(dir, "tree-down");
    await mkdir(out);
    await killHalfway(["cp", `s3://${bucket}/tree-down/`, out, "--recursive", ...slowArgs()], () => journaledBytes(out), 200 * MiB);
    const onDisk = await journaledBytes(out);

    const res = await runS3x(fast(["cp", `s3://${bucket}/tree-down/`, out, "--recursive", "--resume", "--json"]), { env });
    assert.equal(res.code, 0, res.stderr);
    const s = stats(res);
    const missing = 200 * MiB - onDisk;
    assert.ok(s.bytesReceived <= missing + PART, `received ${s.bytesReceived} bytes; ${missing} were missing`);
    for (const [name, hash] of hashes) assert.equal(await fileHash(join(out, name)), hash, name);
    assert.deepEqual((await readdir(out)).sort(), [...hashes.keys()].sort(), "no temporary files or journals left");
  });

  it("a journal left beside a finished file (killed between rename and removal) is dropped by cp -r --resume and sync, and nothing is fetched again", async () => {
    const data = (await import("node:crypto")).randomBytes(12 * MiB);
    await putTestObject(s3, bucket, "stale-journal/a.bin", data);
    const out = join(dir, "stale-journal");
    await mkdir(out);
    const first = await runS3x(fast(["cp", `s3://${bucket}/stale-journal/`, out, "--recursive", "--part-size", "5MiB"]), { env });
    assert.equal(first.code, 0, first.stderr);
    const stale = join(out, ".a.bin.s3x-part.journal");
    const plant = () => writeFile(stale, JSON.stringify({ version: 2, etag: "x", size: data.length, temp: ".a.bin.0badf00d.s3x-part" }) + '\n{"o":0,"n":5242880}\n');
    for (const args of [["cp", "--recursive", "--resume"], ["sync"]]) {
      await plant();
      const res = await runS3x(fast([args[0]!, `s3://${bucket}/stale-journal/`, out, ...args.slice(1), "--json"]), { env });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(stats(res).bytesReceived, 0, `${args[0]}: nothing fetched again`);
      assert.deepEqual(await readdir(out), ["a.bin"], `${args.join(" ")}: the stale journal is gone`);
    }
  });

  it("without --resume, what an interrupted run left is reported; rm --uploads cleans up", async () => {
    const src = join(dir, "report.bin");
    await randomFile(src, 60 * MiB);
    const dest = `s3://${bucket}/report/r.bin`;
    // What the earlier tests left in the state directory: a kill -9 between a
    // file's Complete and its lock's removal leaves that (stale, harmless)
    // lock, and a later --resume run skips the finished file without taking it.
    const stateBefore = await readdir(join(dir, "state", "uploads")).catch(() => [] as string[]);
    await killHalfway(["cp", src, dest, ...slowArgs()], () => storedBytes("report/"), 60 * MiB);
    const again = await runS3x(fast(["cp", src, dest, "--part-size", "5MiB"]), { env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /s3:\/\/\S+\/report\/r\.bin has an interrupted upload from s3x \(upload ID \S+, started [^)]+\); this run starts a new one\. Add --resume to continue it instead, or run: s3x rm --uploads s3:\/\/\S+\/report\/r\.bin/);
    const open = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: "report/" }));
    assert.equal(open.Uploads?.length, 1, "the old upload is still there, reported");
    const clean = await runS3x(fast(["rm", `s3://${bucket}/report/`, "--uploads"]), { env });
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal(await openUploads(s3, bucket), 0);
    assert.deepEqual((await readdir(join(dir, "state", "uploads"))).sort(), stateBefore.sort(), "rm --uploads forgot s3x's records of what it aborted, and the killed run's lock was taken over and released");

    // A download: the stale temporary file is reported and replaced.
    const out = join(dir, "report-down");
    await mkdir(out);
    await killHalfway(["cp", dest, join(out, "r.bin"), ...slowArgs()], () => journaledBytes(out), 60 * MiB);
    const fresh = await runS3x(fast(["cp", dest, join(out, "r.bin")]), { env });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.match(fresh.stderr, /found an interrupted download of \S+ \(\d+ of 62914560 bytes in \S+\.r\.bin\.[0-9a-f]{8}\.s3x-part\); starting over \(add --resume to continue it instead\)/);
    assert.equal(await fileHash(join(out, "r.bin")), await fileHash(src));
    assert.deepEqual(await readdir(out), ["r.bin"]);
  });

  it("a record whose upload S3 no longer has (completed just before a kill) is dropped, never reported, by a plain cp and by cp -r --resume", async () => {
    const tree = join(dir, "stale-tree");
    await mkdir(tree);
    const src = join(tree, "a.bin");
    await randomFile(src, 12 * MiB);
    const dest = { bucket, key: "stale/a.bin" };
    assert.equal((await runS3x(fast(["cp", src, `s3://${bucket}/stale/a.bin`, "--part-size", "5MiB"]), { env })).code, 0);
    const info = await stat(src);
    const writeStaleRecord = async () => {
      const saved = process.env.S3X_STATE_DIR;
      process.env.S3X_STATE_DIR = env.S3X_STATE_DIR;
      try {
        await saveUploadRecord({ version: 1, endpoint: proxy.endpoint, ...dest, uploadId: "2~completed-before-the-kill", source: { path: src, size: info.size, mtimeMs: info.mtimeMs }, partSize: 5 * MiB, started: new Date().toISOString() });
      } finally {
        if (saved === undefined) delete process.env.S3X_STATE_DIR;
        else process.env.S3X_STATE_DIR = saved;
      }
    };
    const records = () => readdir(join(dir, "state", "uploads")).catch(() => [] as string[]);
    const before = (await records()).length;

    await writeStaleRecord();
    const plain = await runS3x(fast(["cp", src, `s3://${bucket}/stale/a.bin`, "--part-size", "5MiB"]), { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(plain.stderr, /interrupted upload/);
    assert.equal((await records()).length, before, "the stale record is gone");

    await writeStaleRecord();
    const resumed = await runS3x(fast(["cp", "-r", tree, `s3://${bucket}/stale/`, "--resume", "--part-size", "5MiB"]), { env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((await records()).length, before, "a finished file's stale record is gone");
  });
});
