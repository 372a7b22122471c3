import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { runS3x, S3X_BIN, type RunResult } from "../support/cli.js";
import { ensureDebianTools, TORCH_TOOLS } from "../support/debian-tools.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const run = promisify(execFile);

/**
 * The README's "Feeding training jobs" examples, as written, with the
 * launchers' variables set by hand (torchrun and Slurm are not installed
 * here) and Python's tarfile in stream mode standing in for WebDataset
 * (which reads a pipe: URL exactly so; it is not installable here). The
 * shards are real tar files, so the note on concatenated shards is checked too.
 * The README's IterableDataset runs under real PyTorch (Debian's python3-torch,
 * installed when missing) with real DataLoader worker processes.
 */
/** The repository's root (the tests run from dist/test/integration). */
const REPO = join(dirname(S3X_BIN), "..");

describe("README: feeding training jobs (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  /** Member names of every shard, in shard order. */
  const members: string[] = [];
  const SHARDS = 6;

  const s3x = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> => runS3x([...args, "--endpoint-url", s3.endpoint], { env: { ...s3.env, ...env } });
  /** Runs `s3x ARGS | python3 tarfile (r| or with ignore_zeros)` and returns the member names read. */
  const tarfileNames = (args: string[], env: NodeJS.ProcessEnv = {}, ignoreZeros = false): Promise<string[]> =>
    new Promise((resolve, reject) => {
      const read = `import sys, tarfile\nwith tarfile.open(fileobj=sys.stdin.buffer, mode='r|', ignore_zeros=${ignoreZeros ? "True" : "False"}) as t:\n    for m in t: print(m.name)`;
      const script = `node "${S3X_BIN}" ${args.map((a) => `'${a}'`).join(" ")} --endpoint-url ${s3.endpoint} | python3 -c "${read.replace(/"/g, '\\"')}"`;
      const sh = spawn("bash", ["-o", "pipefail", "-c", script], { env: { ...s3.env, ...env } });
      let out = "";
      let err = "";
      sh.stdout.on("data", (c: Buffer) => (out += c));
      sh.stderr.on("data", (c: Buffer) => (err += c));
      sh.on("close", (code) => (code === 0 ? resolve(out.trim().split("\n").filter(Boolean)) : reject(new Error(`exit ${code}: ${err}`))));
    });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "train");
    dir = await mkdtemp(join(tmpdir(), "s3x-readme-"));
    for (let i = 0; i < SHARDS; i++) {
      const work = join(dir, `s${i}`);
      await mkdir(work);
      const names = [`sample${i}a.jpg`, `sample${i}a.cls`, `sample${i}b.jpg`, `sample${i}b.cls`];
      for (const name of names) await writeFile(join(work, name), `${name}\n`.repeat(100 * (i + 1)));
      const shard = join(dir, `shard-${String(i).padStart(6, "0")}.tar`);
      await run("tar", ["-cf", shard, "-C", work, ...names]);
      await putTestObject(s3, bucket, `train/shard-${String(i).padStart(6, "0")}.tar`, await readFile(shard));
      members.push(...names);
    }
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("pipe:s3x cat s3://bucket/train/shard-NNNNNN.tar, read as WebDataset reads it", async () => {
    assert.deepEqual(await tarfileNames(["cat", `s3://${bucket}/train/shard-000001.tar`]), members.slice(4, 8));
  });

  it("torchrun: every rank's `cat PREFIX --tar --shard auto --shuffle 3` together give every shard once", async () => {
    const seen: string[] = [];
    for (let rank = 0; rank < 4; rank++) {
      const names = await tarfileNames(["cat", `s3://${bucket}/train/`, "--tar", "--shard", "auto", "--shuffle", "3"], { RANK: String(rank), WORLD_SIZE: "4", LOCAL_RANK: String(rank % 2) });
      seen.push(...names);
    }
    const shards = seen.map((name) => name.replace(/^train\//, ""));
    assert.deepEqual([...shards].sort(), Array.from({ length: SHARDS }, (_, i) => `shard-${String(i).padStart(6, "0")}.tar`).sort());
  });

  it("the README's IterableDataset, with real PyTorch: 2 ranks × 2 DataLoader workers read every sample exactly once an epoch, two epochs", async function () {
    this.timeout(900_000); // the first run may install python3-torch (~230 Debian packages)
    const missing = ensureDebianTools(TORCH_TOOLS);
    if (missing) throw new Error(`the README's DataLoader example runs under real PyTorch: ${missing}`);
    const SAMPLES = 40;
    const RANKS = 2;
    const samples = await freshBucket(s3, "samples");
    const keys = Array.from({ length: SAMPLES }, (_, i) => `train/${String(i).padStart(6, "0")}.bin`);
    for (const key of keys) await putTestObject(s3, samples, key, Buffer.alloc(1024, key));
    const readme = await readFile(join(REPO, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Feeding training jobs"));
    const python = /```python\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    assert.match(python, /class \w+\(tud\.IterableDataset\)/, "the README's training section shows an IterableDataset");
    assert.match(python, /num_workers=2\b/, "the README's DataLoader has 2 workers");
    // The README's script as written, for 2 epochs instead of 100 and on the test's bucket.
    const epochs = python.match(/range\(\d+\)/g);
    assert.equal(epochs?.length, 1, "the README's script has one epoch loop");
    const script = python.replace(/range\(\d+\)/, "range(2)").replaceAll("s3://bucket/", `s3://${samples}/`);
    // `s3x` on PATH as a user has it, talking to radosgw, noting who opened each pipe.
    const bin = join(dir, "torch-bin");
    const opened = join(dir, "torch-opened.log");
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, "s3x"),
      `#!/bin/sh\necho "rank=$RANK worker=$S3X_WORKER $*" >> '${opened}'\nexec '${process.execPath}' '${S3X_BIN}' "$@" --endpoint-url '${s3.endpoint}'\n`,
      { mode: 0o755 },
    );
    // Two ranks at once, as torchrun starts them; Debian's python3 (a pyenv one first on PATH lacks its dist-packages).
    const outputs = await Promise.all(
      Array.from({ length: RANKS }, (_, rank) =>
        run("/usr/bin/python3", ["-c", script], { env: { ...s3.env, PATH: `${bin}:${process.env.PATH}`, RANK: String(rank), WORLD_SIZE: String(RANKS) } }),
      ),
    );
    const rankOf = [new Map<string, number>(), new Map<string, number>()];
    outputs.forEach(({ stdout }, rank) => {
      for (const line of stdout.trim().split("\n").filter(Boolean)) {
        const [epoch, key, size] = line.split(" ");
        const byKey = rankOf[Number(epoch)];
        assert.ok(byKey, `an epoch the script did not run: ${line}`);
        assert.equal(size, "1024", line);
        assert.equal(byKey.has(key), false, `epoch ${epoch}: ${key} read by rank ${byKey.get(key)} and rank ${rank}`);
        byKey.set(key, rank);
      }
    });
    for (const [epoch, byKey] of rankOf.entries()) assert.deepEqual([...byKey.keys()].sort(), keys, `epoch ${epoch} reads every sample`);
    // Every rank's two workers opened their own part, with the epoch as the seed; another seed moved samples between ranks.
    const pipes = (await readFile(opened, "utf8")).trim().split("\n").map((line) => line.replace(/ cat .* --shuffle (\d+)$/, " seed=$1"));
    const expected = [0, 1].flatMap((seed) => [0, 1].flatMap((rank) => [0, 1].map((worker) => `rank=${rank} worker=${worker}/2 seed=${seed}`)));
    assert.deepEqual(pipes.sort(), expected.sort());
    assert.ok(keys.some((key) => rankOf[0].get(key) !== rankOf[1].get(key)), "epoch 1's seed gives ranks other samples than epoch 0's");
  });

  it("a Slurm job array: each task's `cp -r PREFIX DIR --shard auto` downloads its share, together everything", async () => {
    const out = join(dir, "scratch");
    for (let task = 0; task < 4; task++) {
      const env = { SLURM_ARRAY_TASK_ID: String(task), SLURM_ARRAY_TASK_MIN: "0", SLURM_ARRAY_TASK_MAX: "3", SLURM_ARRAY_TASK_COUNT: "4", SLURM_ARRAY_TASK_STEP: "1" };
      const res = await s3x(["cp", "-r", `s3://${bucket}/train/`, out, "--shard", "auto"], env);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, new RegExp(`shard ${task} of 4, from Slurm`));
    }
    assert.equal((await readdir(out)).length, SHARDS);
  });

  it("a SageMaker manifest: `cat --from manifest.json --tar` streams what it names, in its order", async () => {
    const manifest = join(dir, "manifest.json");
    await writeFile(manifest, JSON.stringify([{ prefix: `s3://${bucket}/train/` }, "shard-000004.tar", "shard-000002.tar"]));
    const names = await tarfileNames(["cat", "--from", manifest, "--tar"]);
    assert.deepEqual(names, [`train/shard-000004.tar`, `train/shard-000002.tar`]);
  });

  it("concatenated tar shards (no --tar) read whole with GNU tar -i and tarfile ignore_zeros; plain readers stop after the first", async () => {
    const raw = await s3x(["cat", `s3://${bucket}/train/`]);
    assert.equal(raw.code, 0, raw.stderr);
    const path = join(dir, "concat.tar");
    await writeFile(path, raw.stdout);
    const all = (await run("tar", ["-itf", path])).stdout.trim().split("\n");
    assert.deepEqual(all, members);
    const plain = (await run("tar", ["-tf", path])).stdout.trim().split("\n");
    assert.deepEqual(plain, members.slice(0, 4), "without -i, GNU tar stops at the first shard's end");
    assert.deepEqual(await tarfileNames(["cat", `s3://${bucket}/train/`], {}, true), members);
  });
});
