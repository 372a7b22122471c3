import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileHash, runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, objectHash, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startThrottleProxy, type ThrottleProxy } from "../support/throttle-proxy.js";
import { WORKER_MEMORY_BYTES } from "../../src/engine/workers/pool.js";

const MiB = 1024 * 1024;
const SIZE = 48 * MiB;
const PART = "5MiB";

interface Summary {
  status: string;
  retries: number;
  bytesReceived: number;
  reusedBytes: number;
  peakRssBytes: number;
  addresses: { address: string; requests: number; bytesIn: number; bytesOut: number }[];
}

function summary(text: string): Summary {
  return JSON.parse(text.trim().split("\n").pop() ?? "") as Summary;
}

/** How many worker threads the run started (its --debug lines). */
function workersStarted(res: RunResult): number {
  return (res.stderr.match(/debug: worker thread \d+ started/g) ?? []).length;
}

const sha256 = (data: Buffer): string => createHash("sha256").update(data).digest("hex");

/**
 * The data plane across worker threads (issue #37), through the real CLI
 * against radosgw: byte-exact results with --workers 1, 2 and 4 for the
 * three kinds of work a worker does (a ranged download to a file, a stream's
 * parts, multipart upload parts); a worker that dies mid-transfer (the test
 * hook $S3X_TEST_WORKER_EXIT_AFTER_BYTES) costs a retry, never a corrupt or
 * half-published result; workers that keep dying fail the command cleanly;
 * Ctrl-C then --resume; and memory stays within --max-memory + 150 MiB + the
 * stated cost per worker.
 */
describe("worker threads (integration, real radosgw)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let data: Buffer;
  let hash: string;
  let src: string;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "workers");
    dir = await mkdtemp(join(tmpdir(), "s3x-workers-"));
    data = randomBytes(SIZE);
    hash = sha256(data);
    src = join(dir, "source.bin");
    await (await import("node:fs/promises")).writeFile(src, data);
    await putTestObject(s3, bucket, "big.bin", data);
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const run = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> => runS3x(args, { env: { ...s3.env, ...env } });

  for (const workers of [1, 2, 4]) {
    it(`--workers ${workers}: a download to a file, a stream and an upload are byte-exact, and go through ${workers} worker(s)`, async function () {
      this.timeout(120_000);
      // One request in flight per worker: each worker takes one before the next is started.
      const flags = ["--workers", String(workers), "--concurrency", String(workers), "--part-size", PART, "--debug", "--json"];
      const out = join(dir, `down-${workers}.bin`);
      const down = await run(["cp", `s3://${bucket}/big.bin`, out, ...flags]);
      assert.equal(down.code, 0, down.stderr);
      assert.equal(await fileHash(out), hash);
      assert.equal(workersStarted(down), workers, down.stderr);
      // The workers' own connections are in the per-address counters.
      assert.ok(summary(down.stdout.toString()).addresses.reduce((n, a) => n + a.bytesIn, 0) >= SIZE);

      const stream = await run(["cp", `s3://${bucket}/big.bin`, "-", ...flags.filter((f) => f !== "--json")]);
      assert.equal(stream.code, 0, stream.stderr);
      assert.equal(sha256(stream.stdout), hash);
      assert.equal(workersStarted(stream), workers, stream.stderr);

      const up = await run(["cp", src, `s3://${bucket}/up-${workers}.bin`, ...flags]);
      assert.equal(up.code, 0, up.stderr);
      assert.equal(workersStarted(up), workers, up.stderr);
      assert.equal(await objectHash(s3, bucket, `up-${workers}.bin`), hash);
    });
  }

  it("--workers 0 keeps everything on the main thread; a one-part object starts no worker; $S3X_WORKERS is read; by default only a run of 256 MiB or more starts workers", async function () {
    this.timeout(180_000);
    const none = await run(["cp", `s3://${bucket}/big.bin`, join(dir, "none.bin"), "--workers", "0", "--part-size", PART, "--debug"]);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(workersStarted(none), 0);
    assert.equal(await fileHash(join(dir, "none.bin")), hash);

    await putTestObject(s3, bucket, "small.txt", Buffer.from("hello"));
    const cat = await run(["cat", `s3://${bucket}/small.txt`, "--workers", "4", "--debug"]);
    assert.equal(cat.stdout.toString(), "hello");
    assert.equal(workersStarted(cat), 0, "a one-request object needs no worker");

    const fromEnv = await run(["cp", `s3://${bucket}/big.bin`, join(dir, "env.bin"), "--part-size", PART, "--concurrency", "3", "--debug"], { S3X_WORKERS: "3" });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal(workersStarted(fromEnv), 3);

    // Workers start as requests in flight need them: two at a time need at most two, whatever --workers says.
    const few = await run(["cp", `s3://${bucket}/big.bin`, join(dir, "few.bin"), "--part-size", PART, "--workers", "8", "--concurrency", "2", "--debug"]);
    assert.equal(few.code, 0, few.stderr);
    assert.ok(workersStarted(few) >= 1 && workersStarted(few) <= 2, few.stderr);
    assert.equal(await fileHash(join(dir, "few.bin")), hash);

    // By default, workers carry only runs with work enough to pay for starting one (256 MiB): not this 48 MiB object…
    const { S3X_WORKERS: _unset, ...noWorkersVariable } = s3.env;
    const small = await runS3x(["cp", `s3://${bucket}/big.bin`, join(dir, "default.bin"), "--part-size", PART, "--debug"], { env: noWorkersVariable });
    assert.equal(small.code, 0, small.stderr);
    assert.equal(workersStarted(small), 0, small.stderr);
    // …but a 300 MiB one.
    const large = randomBytes(300 * MiB);
    await putTestObject(s3, bucket, "large.bin", large);
    const big = await runS3x(["cp", `s3://${bucket}/large.bin`, join(dir, "large.bin"), "--debug"], { env: noWorkersVariable });
    assert.equal(big.code, 0, big.stderr);
    assert.ok(workersStarted(big) >= 1, big.stderr);
    assert.equal(await fileHash(join(dir, "large.bin")), sha256(large));
    await rm(join(dir, "large.bin"));

    const bad = await run(["cp", `s3://${bucket}/big.bin`, join(dir, "bad.bin"), "--workers", "-1"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--workers must be a whole number from 0 to 1024, got -1/);
    assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
  });

  it("small objects: a recursive download and upload through --workers 2 (each object's one GET or PUT in a worker) are byte-exact, empty and 1-byte objects included", async function () {
    this.timeout(120_000);
    const sizes = [0, 1, 1000, 64 * 1024, 300 * 1024, 5 * MiB + 1];
    const bodies = new Map<string, Buffer>();
    for (let i = 0; i < 24; i++) {
      const body = randomBytes(sizes[i % sizes.length]!);
      bodies.set(`small/s${i}.bin`, body);
      await putTestObject(s3, bucket, `small/s${i}.bin`, body);
    }
    const out = join(dir, "small");
    const res = await run(["cp", `s3://${bucket}/small/`, out, "--recursive", "--workers", "2", "--debug", "--json"]);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(workersStarted(res) >= 1, `one-request objects go through the workers too: ${res.stderr}`);
    for (const [key, body] of bodies) assert.equal(await fileHash(join(out, key.slice("small/".length))), sha256(body), key);
    assert.deepEqual((await readdir(out)).sort(), [...bodies.keys()].map((k) => k.slice("small/".length)).sort(), "no working file left");

    // And back up: each small file's one PUT in a worker (the 5 MiB + 1 ones as multipart uploads).
    const up = await run(["cp", out, `s3://${bucket}/small-up/`, "--recursive", "--workers", "2", "--multipart-threshold", "5MiB", "--part-size", "5MiB", "--debug"]);
    assert.equal(up.code, 0, up.stderr);
    assert.ok(workersStarted(up) >= 1, up.stderr);
    for (const [key, body] of bodies) assert.equal(await objectHash(s3, bucket, `small-up/${key.slice("small/".length)}`), sha256(body), key);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  for (const workers of [1, 2]) {
    it(`a worker killed mid-transfer (--workers ${workers}): its requests are retried, every result is byte-exact`, async function () {
      this.timeout(120_000);
      // The first worker exits (as a crash would) once it has moved 10 MiB: in the middle of a range.
      const kill = { S3X_TEST_WORKER_EXIT_AFTER_BYTES: String(10 * MiB) };
      const flags = ["--workers", String(workers), "--part-size", PART, "--debug", "--json"];
      const out = join(dir, `killed-${workers}.bin`);
      const down = await run(["cp", `s3://${bucket}/big.bin`, out, ...flags], kill);
      assert.equal(down.code, 0, down.stderr);
      assert.match(down.stderr, /worker thread 0 exited with code 70/);
      assert.ok(summary(down.stdout.toString()).retries >= 1, "the dead worker's range was retried");
      assert.equal(await fileHash(out), hash);

      const stream = await run(["cp", `s3://${bucket}/big.bin`, "-", ...flags.filter((f) => f !== "--json")], kill);
      assert.equal(stream.code, 0, stream.stderr);
      assert.match(stream.stderr, /worker thread 0 exited with code 70/);
      assert.equal(sha256(stream.stdout), hash);

      const up = await run(["cp", src, `s3://${bucket}/killed-up-${workers}.bin`, ...flags], kill);
      assert.equal(up.code, 0, up.stderr);
      assert.match(up.stderr, /worker thread 0 exited with code 70/);
      assert.equal(await objectHash(s3, bucket, `killed-up-${workers}.bin`), hash);
      assert.equal(await openUploads(s3, bucket), 0, "no multipart upload left open");
    });
  }

  it("workers that keep dying fail the command cleanly: exit 1, one line, nothing half-published, no open upload", async function () {
    this.timeout(120_000);
    const dying = { S3X_TEST_WORKER_EXIT_AFTER_BYTES: `${2 * MiB}:all` };
    const outDir = join(dir, "dying");
    await mkdir(outDir);
    const down = await run(["cp", `s3://${bucket}/big.bin`, join(outDir, "big.bin"), "--workers", "2", "--part-size", PART], dying);
    assert.equal(down.code, 1, down.stderr);
    // Out of attempts, or the pool gave up first: one line either way.
    assert.match(down.stderr, /^s3x: download failed: .*a worker thread exited \(code 70\)/);
    assert.equal(down.stderr.trim().split("\n").length, 1, down.stderr);
    assert.deepEqual(await readdir(outDir), [], "no file, temporary file or journal left");

    const up = await run(["cp", src, `s3://${bucket}/dying-up.bin`, "--workers", "2", "--part-size", PART], dying);
    assert.equal(up.code, 1, up.stderr);
    assert.match(up.stderr, /^s3x: upload failed: .*a worker thread exited \(code 70\)/);
    assert.equal(up.stderr.trim().split("\n").length, 1, up.stderr);
    assert.equal(await openUploads(s3, bucket), 0, "the multipart upload was aborted");
    const listed = await run(["ls", `s3://${bucket}/dying-up.bin`]);
    assert.equal(listed.stdout.toString(), "", "nothing published under the key");
  });

  it("peak RSS with 4 workers stays within --max-memory + 150 MiB + 4 × the cost per worker", async function () {
    this.timeout(60_000);
    const maxMemory = 64 * MiB;
    const res = await run(["cp", `s3://${bucket}/big.bin`, join(dir, "rss.bin"), "--workers", "4", "--max-memory", "64MiB", "--part-size", PART, "--json"]);
    assert.equal(res.code, 0, res.stderr);
    const { peakRssBytes } = summary(res.stdout.toString());
    const bound = maxMemory + 150 * MiB + 4 * WORKER_MEMORY_BYTES;
    assert.ok(peakRssBytes <= bound, `peak RSS ${(peakRssBytes / MiB).toFixed(0)} MiB > ${(bound / MiB).toFixed(0)} MiB`);
  });

  describe("Ctrl-C, then --resume", () => {
    let proxy: ThrottleProxy;
    before(async () => {
      proxy = await startThrottleProxy(s3.host, s3.port, 8 * MiB);
    });
    after(async () => proxy?.close());

    it("a download through 2 workers interrupted half-way keeps its file; --resume fetches only what is missing", async function () {
      this.timeout(120_000);
      const outDir = join(dir, "interrupted");
      await mkdir(outDir);
      const dest = join(outDir, "big.bin");
      const args = ["cp", `s3://${bucket}/big.bin`, dest, "--workers", "2", "--part-size", PART, "--endpoint-url", proxy.endpoint];
      proxy.holdAfter(SIZE / 2);
      const first = await runS3x(args, {
        env: s3.env,
        onSpawn: (child) => {
          child.stdin!.end();
          // Once the transfer is held half-way, the user presses Ctrl-C.
          void proxy.whenHolding().then(() => child.kill("SIGINT"));
        },
      });
      assert.equal(first.code, 130, first.stderr);
      assert.match(first.stderr, /kept the partial download of \S+ \(\d+ of 50331648 bytes in \S+\): run the same command with --resume/);
      assert.ok(!(await readdir(outDir)).includes("big.bin"), "nothing under the final name");

      proxy.setRate(0);
      proxy.release();
      const res = await runS3x([...args, "--resume", "--json"], { env: s3.env });
      assert.equal(res.code, 0, res.stderr);
      const s = summary(res.stdout.toString());
      assert.ok(s.reusedBytes > 0, "ranges on disk were reused");
      assert.ok(s.bytesReceived <= SIZE - s.reusedBytes + 5 * MiB, `received ${s.bytesReceived}, reused ${s.reusedBytes}`);
      assert.equal(await fileHash(dest), hash);
      assert.deepEqual(await readdir(outDir), ["big.bin"], "no temporary file or journal left");
    });
  });
});
