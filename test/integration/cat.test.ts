import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { runPipeline, runS3x, S3X_BIN, sha256, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const run = promisify(execFile);
const MiB = 1024 * 1024;
/** GNU tar prints names as they are only in a UTF-8 locale. */
const UTF8 = { ...process.env, LC_ALL: "C.UTF-8" };

/**
 * `s3x cat` (and `cp -r … -`): many objects as one stream, through the real
 * CLI against radosgw. Raw bytes are compared with the objects in listing
 * order; --tar output is read back by GNU tar and by Python's tarfile in
 * stream mode (what WebDataset reads it with).
 */
describe("cat: a prefix as one stream (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  /** The objects under data/, in listing (key) order. */
  const objects: { key: string; body: Buffer }[] = [];
  const s3x = (args: string[], stdin?: Buffer): Promise<RunResult> => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env, stdin });
  const expected = (list = objects): Buffer => Buffer.concat(list.map((o) => o.body));

  before(async function () {
    this.timeout(180_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "cat");
    const longName = `data/${"l".repeat(120)}/sample.bin`;
    const sizes: [string, number][] = [
      ["data/a-empty.bin", 0],
      ["data/b-small.txt", 11],
      ["data/c-block.bin", 512],
      ["data/d-multipart.bin", 3 * MiB + 17],
      ["data/e-ünïcode.bin", 1000],
      [longName, 2048],
    ];
    for (let i = 0; i < 24; i++) sizes.push([`data/many/s${String(i).padStart(3, "0")}.bin`, (i * 7919) % 70_000]);
    for (const [key, size] of sizes) {
      const body = randomBytes(size);
      await putTestObject(s3, bucket, key, body);
      objects.push({ key, body });
    }
    await putTestObject(s3, bucket, "other/outside.bin", randomBytes(10));
    objects.sort((a, b) => (Buffer.compare(Buffer.from(a.key), Buffer.from(b.key))));
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-cat-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes every object under the prefix once, in listing order, byte for byte", async () => {
    const res = await s3x(["cat", `s3://${bucket}/data/`, "--part-size", "1MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, "", "nothing but the bytes, as cat");
    assert.equal(res.stdout.length, expected().length);
    assert.equal(sha256(res.stdout), sha256(expected()));
  });

  it("cp --recursive to - writes the same stream", async () => {
    const res = await s3x(["cp", "-r", `s3://${bucket}/data/`, "-", "--part-size", "1MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(sha256(res.stdout), sha256(expected()));
  });

  it("fetches an object of up to two parts in one GET (no ranges, no HEAD), a larger one in ranged parts", async () => {
    const whole = randomBytes(2 * MiB);
    const ranged = randomBytes(2 * MiB + 1);
    await putTestObject(s3, bucket, "two/a-whole.bin", whole);
    await putTestObject(s3, bucket, "two/b-ranged.bin", ranged);
    const res = await s3x(["cat", `s3://${bucket}/two/`, "--part-size", "1MiB", "--json"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(sha256(res.stdout), sha256(Buffer.concat([whole, ranged])));
    const summary = JSON.parse(res.stderr.trim().split("\n").pop()!) as { requests: number; retries: number };
    // The listing; one GET for the first; for the second three ranged GETs and the HEAD that looks for its stored checksum.
    assert.equal(summary.requests - summary.retries, 1 + 1 + 4, res.stderr);
  });

  it("objects of 512 KiB to 1 MiB, a smaller one before a larger one, stream whole (a reused buffer block was once handed out short)", async () => {
    const sizes = [600_000, 1_000_000, 700_000, 1_040_000, 540_000, 990_000, 650_000, 1_048_576, 800_000, 1_020_000];
    const bodies = sizes.map((size) => randomBytes(size));
    for (let i = 0; i < bodies.length; i++) await putTestObject(s3, bucket, `mid/o${String(i).padStart(2, "0")}.bin`, bodies[i]!);
    for (const concurrency of ["1", "4", "25"]) {
      const res = await s3x(["cat", `s3://${bucket}/mid/`, "--concurrency", concurrency]);
      assert.equal(res.code, 0, `--concurrency ${concurrency}: ${res.stderr}`);
      assert.equal(sha256(res.stdout), sha256(Buffer.concat(bodies)), `--concurrency ${concurrency}`);
    }
  });

  it("--tar: GNU tar lists the keys and sizes and extracts the right bytes", async () => {
    const res = await s3x(["cat", `s3://${bucket}/data/`, "--tar", "--part-size", "1MiB"]);
    assert.equal(res.code, 0, res.stderr);
    const archive = join(dir, "out.tar");
    await writeFile(archive, res.stdout);
    const listing = (await run("tar", ["--quoting-style=literal", "-tvf", archive], { maxBuffer: 16 * MiB, env: UTF8 })).stdout.trim().split("\n");
    assert.deepEqual(listing.map((line) => line.split(/\s+/).slice(5).join(" ")), objects.map((o) => o.key));
    assert.deepEqual(listing.map((line) => Number(line.split(/\s+/)[2])), objects.map((o) => o.body.length));
    const out = join(dir, "x");
    await mkdir(out);
    await run("tar", ["-xf", archive, "-C", out], { env: UTF8 });
    for (const o of objects) assert.equal(sha256(await readFile(join(out, o.key))), sha256(o.body), o.key);
  });

  it("--tar: Python's tarfile reads it as a stream (mode r|, as WebDataset does) with the right names, sizes and bytes", async () => {
    const res = await s3x(["cat", `s3://${bucket}/data/`, "--tar"]);
    assert.equal(res.code, 0, res.stderr);
    const script = [
      "import sys, tarfile, hashlib, json",
      "out = []",
      "with tarfile.open(fileobj=sys.stdin.buffer, mode='r|') as t:",
      "    for m in t:",
      "        f = t.extractfile(m)",
      "        out.append([m.name, m.size, hashlib.sha256(f.read() if f else b'').hexdigest()])",
      "print(json.dumps(out))",
    ].join("\n");
    const listed = await pythonWithInput(script, res.stdout);
    assert.deepEqual(JSON.parse(listed), objects.map((o) => [o.key, o.body.length, sha256(o.body)]));
  });

  it("ends quietly when the reader closes the pipe (| head -c 1000)", async () => {
    const script = `node "${S3X_BIN}" cat "s3://${bucket}/data/" --endpoint-url ${s3.endpoint} | head -c 1000 | wc -c; echo "status=\${PIPESTATUS[0]}"`;
    const res = await runPipeline(script, s3.env);
    assert.match(res.out, /^1000\nstatus=(0|141)\n$/);
    assert.equal(res.err, "", "no error output, no stack trace");
  });

  it("--shuffle SEED: the same order for the same seed, another for another seed, every object once", async () => {
    const names = async (seed: string): Promise<string[]> => tarNames((await s3x(["cat", `s3://${bucket}/data/`, "--tar", "--shuffle", seed])).stdout, dir);
    const first = await names("7");
    assert.deepEqual(await names("7"), first);
    assert.notDeepEqual(await names("8"), first);
    assert.deepEqual([...first].sort(), objects.map((o) => o.key).sort());
  });

  it("--shard I/N: disjoint shards whose union is the prefix, each in listing order", async () => {
    const shards: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const res = await s3x(["cat", `s3://${bucket}/data/`, "--tar", "--shard", `${i}/3`]);
      assert.equal(res.code, 0, res.stderr);
      shards.push(await tarNames(res.stdout, dir));
    }
    const all = shards.flat();
    assert.equal(new Set(all).size, all.length, "disjoint");
    assert.deepEqual([...all].sort(), objects.map((o) => o.key).sort(), "the union is every object");
    for (const shard of shards) assert.deepEqual(shard, [...shard].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))), "listing order within a shard");
  });

  it("--shard auto takes RANK and WORLD_SIZE from torchrun and says so", async () => {
    const res = await runS3x(["cat", `s3://${bucket}/data/`, "--tar", "--shard", "auto", "--endpoint-url", s3.endpoint], { env: { ...s3.env, RANK: "1", WORLD_SIZE: "2" } });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /shard 1 of 2, from torchrun/);
    const explicit = await s3x(["cat", `s3://${bucket}/data/`, "--tar", "--shard", "1/2"]);
    assert.deepEqual(await tarNames(res.stdout, dir), await tarNames(explicit.stdout, dir));
  });

  it("--shard auto without a launcher fails with one line, nothing written", async () => {
    const env = { ...s3.env };
    for (const name of ["RANK", "WORLD_SIZE", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "OMPI_COMM_WORLD_RANK", "PMI_RANK"]) delete env[name];
    const res = await runS3x(["cat", `s3://${bucket}/data/`, "--shard", "auto", "--endpoint-url", s3.endpoint], { env });
    assert.equal(res.code, 2);
    assert.equal(res.stdout.length, 0);
    assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
  });

  it("one object: the same as cp URL -, and with --tar one entry", async () => {
    const o = objects.find((x) => x.key === "data/d-multipart.bin")!;
    const raw = await s3x(["cat", `s3://${bucket}/${o.key}`, "--part-size", "1MiB"]);
    assert.equal(raw.code, 0, raw.stderr);
    assert.equal(sha256(raw.stdout), sha256(o.body));
    const tar = await s3x(["cat", `s3://${bucket}/${o.key}`, "--tar"]);
    assert.deepEqual(await tarNames(tar.stdout, dir), [o.key]);
  });

  it("a missing object fails before anything is written, naming it", async () => {
    const res = await s3x(["cat", `s3://${bucket}/data/nope.bin`]);
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout.length, 0);
    assert.match(res.stderr, /nope\.bin: no such object \(for every object under a prefix, end it with "\/"\)/);
  });

  it("--dryrun names each object and writes no bytes, not even a tar end", async () => {
    const res = await s3x(["cat", `s3://${bucket}/data/many/`, "--tar", "--dryrun"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.indexOf(0), -1, "no tar bytes (an archive's end is zero blocks)");
    const lines = res.stdout.toString().trim().split("\n");
    assert.equal(lines.length, 24);
    assert.match(lines[0]!, /^\(dryrun\) download: s3:\/\/\S+\/data\/many\/s000\.bin to -$/);
  });

  it("--include/--exclude choose the objects, before --shard splits them", async () => {
    const res = await s3x(["cat", `s3://${bucket}/data/`, "--tar", "--exclude", "*", "--include", "many/s00*"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await tarNames(res.stdout, dir), objects.map((o) => o.key).filter((k) => k.startsWith("data/many/s00")));
  });

  it("writes into a named pipe given as the destination of cp --recursive (Pipe mode's FIFO)", async () => {
    const fifo = join(dir, "fifo");
    await run("mkfifo", [fifo]);
    const reader = spawn("bash", ["-c", `sha256sum < "${fifo}"`]);
    let hashed = "";
    reader.stdout.on("data", (c: Buffer) => (hashed += c));
    const readerDone = new Promise<void>((resolve) => reader.on("close", () => resolve()));
    const res = await s3x(["cp", "-r", `s3://${bucket}/data/`, fifo]);
    await readerDone;
    assert.equal(res.code, 0, res.stderr);
    assert.equal(hashed.split(" ")[0], sha256(expected()));
  });

  describe("--shard on cp -r, sync and rm -r", () => {
    it("cp -r --shard: three workers download disjoint parts that make up the prefix", async () => {
      const got: string[] = [];
      for (let i = 0; i < 3; i++) {
        const out = join(dir, `w${i}`);
        const res = await s3x(["cp", "-r", `s3://${bucket}/data/`, out, "--shard", `${i}/3`]);
        assert.equal(res.code, 0, res.stderr);
        const files = (await run("find", [out, "-type", "f"])).stdout.trim().split("\n").filter(Boolean);
        for (const file of files) got.push(file.slice(out.length + 1));
      }
      assert.equal(new Set(got).size, got.length, "disjoint");
      assert.deepEqual(got.sort(), objects.map((o) => o.key.slice("data/".length)).sort());
    });

    it("sync --shard copies only the shard, and a second run has nothing to do; --delete with --shard is refused", async () => {
      const out = join(dir, "s");
      const first = await s3x(["sync", `s3://${bucket}/data/`, out, "--shard", "1/2"]);
      assert.equal(first.code, 0, first.stderr);
      const again = await s3x(["sync", `s3://${bucket}/data/`, out, "--shard", "1/2"]);
      assert.match(again.stderr, /^sync: 0 transferred/);
      const refused = await s3x(["sync", `s3://${bucket}/data/`, out, "--shard", "1/2", "--delete"]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /--delete cannot be combined with --shard/);
    });

    it("rm -r --shard: two workers delete every object once between them", async () => {
      const keys = Array.from({ length: 9 }, (_, i) => `rms/k${i}.bin`);
      for (const key of keys) await putTestObject(s3, bucket, key, randomBytes(100 * (key.length + 1)));
      let deleted = 0;
      for (let i = 0; i < 2; i++) {
        const res = await s3x(["rm", "-r", `s3://${bucket}/rms/`, "--shard", `${i}/2`]);
        assert.equal(res.code, 0, res.stderr);
        // A hash split of 9 keys may put any number on one worker (the bucket name is part of what is hashed).
        const match = /^rm: (\d+) deleted, 0 failed/.exec(res.stderr);
        assert.ok(match, res.stderr);
        deleted += Number(match[1]);
      }
      assert.equal(deleted, keys.length, "each object deleted by exactly one worker");
      const left = await s3x(["ls", "-r", `s3://${bucket}/rms/`]);
      assert.equal(left.stdout.toString(), "");
    });
  });

  describe("--from: manifests", () => {
    const pick = (): { key: string; body: Buffer }[] => [objects[3]!, objects[1]!, objects[10]!];

    it("a list of s3:// URLs, in the manifest's order", async () => {
      const manifest = join(dir, "list.txt");
      await writeFile(manifest, `# picked\n${pick().map((o) => `s3://${bucket}/${o.key}`).join("\r\n")}\n\n`);
      const res = await s3x(["cat", "--from", manifest]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(sha256(res.stdout), sha256(expected(pick())));
    });

    it("a SageMaker manifest (prefix, then relative keys), from stdin", async () => {
      const body = JSON.stringify([{ prefix: `s3://${bucket}/data/` }, ...pick().map((o) => o.key.slice("data/".length))]);
      const res = await s3x(["cat", "--from", "-"], Buffer.from(body));
      assert.equal(res.code, 0, res.stderr);
      assert.equal(sha256(res.stdout), sha256(expected(pick())));
    });

    it("an augmented manifest (JSON Lines, source-ref or --attribute)", async () => {
      const manifest = join(dir, "aug.jsonl");
      await writeFile(manifest, pick().map((o) => JSON.stringify({ "source-ref": "ignored", image: `s3://${bucket}/${o.key}`, label: 3 })).join("\n"));
      const res = await s3x(["cat", "--from", manifest, "--attribute", "image"]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(sha256(res.stdout), sha256(expected(pick())));
    });

    it("keys relative to a base prefix, copied into a directory with cp --from", async () => {
      const manifest = join(dir, "keys.txt");
      await writeFile(manifest, pick().map((o) => o.key.slice("data/".length)).join("\n"));
      const out = join(dir, "out");
      const res = await s3x(["cp", "--from", manifest, `s3://${bucket}/data/`, out]);
      assert.equal(res.code, 0, res.stderr);
      for (const o of pick()) assert.equal(sha256(await readFile(join(out, o.key.slice("data/".length)))), sha256(o.body));
    });

    for (const [what, text, line] of [
      ["bad JSON in JSON Lines", (b: string) => `{"source-ref": "s3://${b}/data/b-small.txt"}\n{"source-ref": \n`, 2],
      ["a line without source-ref", (b: string) => `{"source-ref": "s3://${b}/data/b-small.txt"}\n{"other": "s3://${b}/data/c-block.bin"}\n`, 2],
      ["a URL in another bucket than the base", () => "b-small.txt\ns3://elsewhere/b.bin\n", 2],
    ] as const) {
      it(`${what}: one line naming the manifest's line, nothing written`, async () => {
        const manifest = join(dir, "bad.txt");
        await writeFile(manifest, text(bucket));
        const res = await s3x(["cat", "--from", manifest, `s3://${bucket}/data/`]);
        assert.equal(res.code, 2, res.stderr);
        assert.equal(res.stdout.length, 0);
        assert.match(res.stderr, new RegExp(`bad\\.txt:${line}: `));
        assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
      });
    }

    it("rm --from deletes exactly the listed objects", async () => {
      const victims = ["rmx/one.bin", "rmx/two.bin"];
      for (const key of [...victims, "rmx/keep.bin"]) await putTestObject(s3, bucket, key, randomBytes(5));
      const manifest = join(dir, "rm.txt");
      await writeFile(manifest, victims.map((k) => `s3://${bucket}/${k}`).join("\n"));
      const res = await s3x(["rm", "--from", manifest]);
      assert.equal(res.code, 0, res.stderr);
      const left = await s3x(["ls", "-r", `s3://${bucket}/rmx/`]);
      assert.match(left.stdout.toString(), /keep\.bin/);
      assert.doesNotMatch(left.stdout.toString(), /one\.bin|two\.bin/);
    });
  });
});

/** The member names of a tar stream, in order (GNU tar). */
async function tarNames(archive: Buffer, dir: string): Promise<string[]> {
  const path = join(dir, `names-${Math.random().toString(36).slice(2)}.tar`);
  await writeFile(path, archive);
  const { stdout } = await run("tar", ["--quoting-style=literal", "-tf", path], { maxBuffer: 16 * MiB, env: UTF8 });
  return stdout.trim().split("\n").filter((line) => line !== "");
}

function pythonWithInput(script: string, input: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("python3", ["-c", script]);
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c));
    child.stderr.on("data", (c: Buffer) => (err += c));
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`python3 exited ${code}: ${err}`))));
    child.stdin.end(input);
  });
}
