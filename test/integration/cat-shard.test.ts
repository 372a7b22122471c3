import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const run = promisify(execFile);

/** Every variable `--shard auto` reads: cleared, so the machine running the tests cannot choose a launcher. */
const LAUNCHER_VARIABLES = [
  "RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
  "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "S3X_SHARD_COUNT",
  "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "S3X_WORKER",
];

/**
 * How training jobs' workers share a prefix through `--shard`, through the
 * real CLI against radosgw, the launchers' variables set by hand (torchrun
 * and Slurm are not installed here): ranks × DataLoader workers
 * (S3X_WORKER), --shard-balance, plain srun, launchers that disagree, and
 * more workers than objects.
 */
describe("cat --shard: ranks, DataLoader workers and launchers (integration, real radosgw)", function () {
  this.timeout(300_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  /** One large object and many small ones: a split by bytes gives the ranks very different object counts. */
  const keys: string[] = [];

  const cat = (args: string[], launcher: Record<string, string>): Promise<RunResult> => {
    const env: NodeJS.ProcessEnv = { ...s3.env };
    for (const name of LAUNCHER_VARIABLES) delete env[name];
    return runS3x(["cat", `s3://${bucket}/train/`, ...args, "--endpoint-url", s3.endpoint], { env: { ...env, ...launcher } });
  };
  /** The keys a `cat --tar` run wrote, read back by GNU tar. */
  const namesOf = async (res: RunResult): Promise<string[]> => {
    assert.equal(res.code, 0, res.stderr);
    const path = join(dir, `names-${Math.random().toString(36).slice(2)}.tar`);
    await writeFile(path, res.stdout);
    const { stdout } = await run("tar", ["-tf", path]);
    return stdout.trim().split("\n").filter((line) => line !== "");
  };

  before(async () => {
    s3 = await testS3();
    bucket = await freshBucket(s3, "shard");
    dir = await mkdtemp(join(tmpdir(), "s3x-cat-shard-"));
    keys.push("train/big.bin");
    await putTestObject(s3, bucket, "train/big.bin", randomBytes(200_000));
    for (let i = 0; i < 29; i++) {
      const key = `train/s${String(i).padStart(3, "0")}.bin`;
      await putTestObject(s3, bucket, key, randomBytes(1000 + i));
      keys.push(key);
    }
    keys.sort();
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("ranks × DataLoader workers (RANK/WORLD_SIZE + S3X_WORKER) read every object exactly once, for every combination", async () => {
    for (const ranks of [1, 2, 3]) {
      for (const workers of [1, 2, 3]) {
        const readBy = new Map<string, string>();
        for (let rank = 0; rank < ranks; rank++) {
          for (let worker = 0; worker < workers; worker++) {
            const names = await namesOf(await cat(["--tar", "--shard", "auto", "--shuffle", "5"], { RANK: String(rank), WORLD_SIZE: String(ranks), S3X_WORKER: `${worker}/${workers}` }));
            for (const name of names) {
              assert.equal(readBy.has(name), false, `${ranks} ranks × ${workers} workers: ${name} read by ${readBy.get(name)} and ${rank}/${worker}`);
              readBy.set(name, `${rank}/${worker}`);
            }
          }
        }
        assert.deepEqual([...readBy.keys()].sort(), keys, `${ranks} ranks × ${workers} workers: every object read`);
      }
    }
  });

  it("--shard-balance count: the shares' object counts differ by at most 1 (by bytes, the default, they do not); --debug prints the share's counts", async () => {
    const counts = async (balance: string[]) => {
      const out: number[] = [];
      for (let rank = 0; rank < 4; rank++) out.push((await namesOf(await cat(["--tar", "--shard", "auto", ...balance], { RANK: String(rank), WORLD_SIZE: "4" }))).length);
      return out;
    };
    const byCount = await counts(["--shard-balance", "count"]);
    assert.equal(byCount.reduce((a, b) => a + b), keys.length);
    assert.ok(Math.max(...byCount) - Math.min(...byCount) <= 1, `by count: ${byCount.join(", ")}`);
    const byBytes = await counts([]);
    assert.ok(Math.max(...byBytes) - Math.min(...byBytes) > 1, `by bytes: ${byBytes.join(", ")} (the big object's rank gets fewer)`);
    const debug = await cat(["--tar", "--shard", "auto", "--shard-balance", "count", "--debug"], { RANK: "0", WORLD_SIZE: "4" });
    assert.match(debug.stderr, new RegExp(`s3x: debug: shard 0 of 4, from torchrun \\(RANK=0, WORLD_SIZE=4\\): ${byCount[0]} of the ${keys.length} objects, \\d+ bytes \\(balanced by count\\)`));
    const bad = await cat(["--shard", "auto", "--shard-balance", "files"], { RANK: "0", WORLD_SIZE: "4" });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid --shard-balance "files": expected bytes or count/);
    const alone = await cat(["--shard-balance", "count"], {});
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--shard-balance goes with --shard/);
    // rm -r --shard splits by a hash of each key: a balance would be ignored, so it is refused (and nothing deleted).
    const rmBalanced = await runS3x(["rm", "-r", `s3://${bucket}/train/`, "--shard", "0/2", "--shard-balance", "count", "--endpoint-url", s3.endpoint], { env: s3.env });
    assert.equal(rmBalanced.code, 2);
    assert.match(rmBalanced.stderr, /rm does not take --shard-balance/);
    assert.equal((await namesOf(await cat(["--tar"], {}))).length, keys.length, "nothing deleted");
  });

  it("plain srun: SLURM_PROCID/SLURM_NTASKS give the same shard as --shard I/N, and say so", async () => {
    const res = await cat(["--tar", "--shard", "auto"], { SLURM_PROCID: "2", SLURM_NTASKS: "3" });
    assert.match(res.stderr, /^s3x: shard 2 of 3, from Slurm \(SLURM_PROCID=2, SLURM_NTASKS=3\)$/m);
    assert.deepEqual(await namesOf(res), await namesOf(await cat(["--tar", "--shard", "2/3"], {})));
  });

  it("launchers that disagree are refused with one line naming both, nothing written; equal values agree", async () => {
    const res = await cat(["--tar", "--shard", "auto"], { RANK: "1", WORLD_SIZE: "4", SLURM_PROCID: "3", SLURM_NTASKS: "8" });
    assert.equal(res.code, 2);
    assert.equal(res.stdout.length, 0);
    assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
    assert.match(res.stderr, /torchrun \(RANK=1, WORLD_SIZE=4\) and Slurm \(SLURM_PROCID=3, SLURM_NTASKS=8\) disagree/);
    const agreeing = await cat(["--tar", "--shard", "auto"], { RANK: "3", WORLD_SIZE: "8", SLURM_PROCID: "3", SLURM_NTASKS: "8" });
    assert.deepEqual(await namesOf(agreeing), await namesOf(await cat(["--tar", "--shard", "3/8"], {})));
  });

  it("more workers than objects: an empty share says so on stderr (not with --quiet), and exits 0", async () => {
    const res = await cat(["--tar", "--shard", "auto", "--exclude", "*", "--include", "s00*"], { RANK: "3", WORLD_SIZE: "4", S3X_WORKER: "2/3" });
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await namesOf(res), []);
    assert.match(res.stderr, /this worker's share is empty: 10 objects split 12 ways leave none to it/);
    const quiet = await cat(["--tar", "--shard", "auto", "--exclude", "*", "--include", "s00*", "--quiet"], { RANK: "3", WORLD_SIZE: "4", S3X_WORKER: "2/3" });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, "");
  });

  it("the shard line is printed once per process, and not with --quiet", async () => {
    const res = await cat(["--tar", "--shard", "auto"], { RANK: "1", WORLD_SIZE: "2", S3X_WORKER: "1/2" });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, "s3x: shard 1 of 2, from torchrun (RANK=1, WORLD_SIZE=2); part 1 of 2 of it, from S3X_WORKER=1/2\n");
    const quiet = await cat(["--tar", "--shard", "auto", "--quiet"], { RANK: "1", WORLD_SIZE: "2", S3X_WORKER: "1/2" });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, "");
  });
});
