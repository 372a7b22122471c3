import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { runS3x, S3X_BIN, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const run = promisify(execFile);

/**
 * The README's "Feeding training jobs" examples, as written, with the
 * launchers' variables set by hand (torchrun and Slurm are not installed
 * here) and Python's tarfile in stream mode standing in for WebDataset
 * (which reads a pipe: URL exactly so; it is not installable here). The
 * shards are real tar files, so the note on concatenated shards is checked too.
 */
/** The repository's root (the tests run from dist/test/integration). */
const REPO = join(dirname(S3X_BIN), "..");

/**
 * A FAKE: `torch.utils.data.get_worker_info()` (PyTorch is not installed
 * here), answering as in a DataLoader worker (id and num_workers from
 * FAKE_WORKER_ID and FAKE_NUM_WORKERS) or, without them, as in the main
 * process (None). Returns the directory to put on PYTHONPATH.
 */
async function writeFakeTorch(root: string): Promise<string> {
  const base = join(root, "fake-torch");
  await mkdir(join(base, "torch", "utils"), { recursive: true });
  await writeFile(join(base, "torch", "__init__.py"), "from . import utils\n");
  await writeFile(join(base, "torch", "utils", "__init__.py"), "from . import data\n");
  await writeFile(
    join(base, "torch", "utils", "data.py"),
    [
      "import os, types",
      "def get_worker_info():",
      "    if 'FAKE_WORKER_ID' not in os.environ: return None",
      "    return types.SimpleNamespace(id=int(os.environ['FAKE_WORKER_ID']), num_workers=int(os.environ['FAKE_NUM_WORKERS']))",
      "",
    ].join("\n"),
  );
  return base;
}

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

  it("torchrun with DataLoader workers: the README's Python sets S3X_WORKER, and ranks × workers read every shard once", async function () {
    this.timeout(180_000);
    const readme = await readFile(join(REPO, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Feeding training jobs"));
    const python = /```python\n([\s\S]*?)```/.exec(section)?.[1];
    const opened = /^torchrun .*# each worker opens: pipe:(.*)$/m.exec(section)?.[1];
    assert.ok(python && opened, "the README's training section has the Python lines and the torchrun line");
    const command = opened.trim().replace(/^s3x /, "").replace("s3://bucket/", `s3://${bucket}/`).split(/\s+/);
    const fakeTorch = await writeFakeTorch(dir);
    // What each DataLoader worker runs: the README's lines, then the pipe it opens, read as tarfile reads it.
    const worker = [
      "import os, subprocess, sys, tarfile, torch",
      python,
      `p = subprocess.Popen([${JSON.stringify(process.execPath)}, ${JSON.stringify(S3X_BIN)}, ${command.map((a) => JSON.stringify(a)).join(", ")}, "--endpoint-url", ${JSON.stringify(s3.endpoint)}], stdout=subprocess.PIPE)`,
      "with tarfile.open(fileobj=p.stdout, mode='r|') as t:",
      "    for m in t: print(m.name)",
      "sys.exit(p.wait())",
    ].join("\n");
    for (const [ranks, workers] of [[2, 3], [3, 2], [1, 4]] as const) {
      const readBy = new Map<string, string>();
      for (let rank = 0; rank < ranks; rank++) {
        for (let id = 0; id < workers; id++) {
          const env = { ...s3.env, PYTHONPATH: fakeTorch, FAKE_WORKER_ID: String(id), FAKE_NUM_WORKERS: String(workers), RANK: String(rank), WORLD_SIZE: String(ranks) };
          const { stdout } = await run("python3", ["-c", worker], { env });
          for (const name of stdout.trim().split("\n").filter(Boolean)) {
            assert.equal(readBy.has(name), false, `${ranks} ranks × ${workers} workers: ${name} read by ${readBy.get(name)} and ${rank}/${id}`);
            readBy.set(name, `${rank}/${id}`);
          }
        }
      }
      assert.deepEqual([...readBy.keys()].sort(), Array.from({ length: SHARDS }, (_, i) => `train/shard-${String(i).padStart(6, "0")}.tar`));
    }
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
