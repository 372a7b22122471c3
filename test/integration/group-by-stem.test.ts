import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const run = promisify(execFile);

/** Every variable `--shard auto` and S3X_WORKER read: cleared, so the machine running the tests cannot choose a launcher. */
const LAUNCHER_VARIABLES = [
  "RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
  "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "S3X_SHARD_COUNT",
  "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "S3X_WORKER",
];

/** WebDataset's stem, written independently of src/plan/groups.ts: the key without everything from the first dot of its last component. */
const stem = (key: string): string => key.replace(/\.[^/]*$/, "");

/** Key order as S3 lists (UTF-8 bytes). */
const byKey = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Checks the shares of a split: every key once, each stem with one share,
 * a stem's keys adjacent (what WebDataset's group_by_keys needs of a tar
 * stream) and in key order. `ordered`: false when a share's order is not
 * observable (files on disk).
 */
function assertWholeStems(shares: readonly string[][], keys: readonly string[], label: string, ordered = true): void {
  assert.deepEqual(shares.flat().sort(byKey), [...keys].sort(byKey), `${label}: every object exactly once`);
  const shareOf = new Map<string, number>();
  shares.forEach((share, index) => {
    for (const key of share) {
      const s = stem(key);
      assert.equal(shareOf.get(s) ?? index, index, `${label}: ${s} torn between workers ${shareOf.get(s)} and ${index}`);
      shareOf.set(s, index);
    }
    if (!ordered) return;
    const runs = share.map(stem).filter((s, i, all) => i === 0 || all[i - 1] !== s);
    assert.equal(runs.length, new Set(runs).size, `${label}: a stem's objects are not adjacent in worker ${index}: ${share.join(" ")}`);
    for (const s of runs) {
      const members = share.filter((key) => stem(key) === s);
      assert.deepEqual(members, [...members].sort(byKey), `${label}: ${s} not in key order`);
    }
  });
}

/** The member names of a tar stream, read as WebDataset reads it: Python's tarfile in stream mode (r|). */
function tarMembers(archive: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const script = "import sys, tarfile\nwith tarfile.open(fileobj=sys.stdin.buffer, mode='r|') as t:\n    for m in t:\n        t.extractfile(m).read()\n        print(m.name)\n";
    const child = spawn("python3", ["-c", script]);
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c));
    child.stderr.on("data", (c: Buffer) => (err += c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out.split("\n").filter((line) => line !== "")) : reject(new Error(`python3 tarfile failed: ${err}`))));
    child.stdin.end(archive);
  });
}

/**
 * `--group-by stem`: a sample stored as several objects (000123.jpg +
 * 000123.cls) stays with one worker, its objects adjacent and in key order,
 * through --shard (I/N and S3X_WORKER) and --shuffle, on cat --tar, cp -r,
 * --from manifests, sync and rm -r; through the real CLI against radosgw.
 */
describe("--group-by stem: a sample's objects stay together (integration, real radosgw)", function () {
  this.timeout(300_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  /** Every key under train/: samples of 2 objects, every third of 4. */
  const keys: string[] = [];

  const s3x = (args: string[], launcher: Record<string, string> = {}, stdin?: Buffer): Promise<RunResult> => {
    const env: NodeJS.ProcessEnv = { ...s3.env };
    for (const name of LAUNCHER_VARIABLES) delete env[name];
    return runS3x([...args, "--endpoint-url", s3.endpoint], { env: { ...env, ...launcher }, stdin });
  };
  const ok = (res: RunResult): RunResult => {
    assert.equal(res.code, 0, res.stderr);
    return res;
  };
  /** `cat --tar` of train/ with these options, as Python's tarfile reads it. */
  const catTar = async (args: string[], launcher: Record<string, string> = {}): Promise<string[]> => tarMembers(ok(await s3x(["cat", `s3://${bucket}/train/`, "--tar", ...args], launcher)).stdout);
  const filesUnder = async (root: string): Promise<string[]> => (await run("find", [root, "-type", "f"])).stdout.split("\n").filter(Boolean).map((f) => `train/${f.slice(root.length + 1)}`);

  before(async () => {
    s3 = await testS3();
    bucket = await freshBucket(s3, "stem");
    dir = await mkdtemp(join(tmpdir(), "s3x-group-by-"));
    for (let i = 0; i < 15; i++) {
      const base = `train/${String(i * 7).padStart(6, "0")}`;
      const extensions = i % 3 === 0 ? ["cls", "jpg", "json", "seg.png"] : ["cls", "jpg"];
      for (const ext of extensions) {
        const key = `${base}.${ext}`;
        // Sizes vary a lot between samples, so a split by bytes per object tears samples apart.
        await putTestObject(s3, bucket, key, randomBytes(ext === "jpg" ? 500 + ((i * 3779) % 9000) : 20 + i));
        keys.push(key);
      }
    }
    keys.sort(byKey);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("cat --tar --shard I/N (and S3X_WORKER) --group-by stem: every stem with one worker, adjacent, in key order; without it stems are torn", async () => {
    const three = await Promise.all([0, 1, 2].map((i) => catTar(["--shard", `${i}/3`, "--group-by", "stem"])));
    assertWholeStems(three, keys, "--shard I/3");
    const workers: string[][] = [];
    for (const rank of [0, 1]) {
      for (const worker of [0, 1]) workers.push(await catTar(["--shard", "auto", "--shuffle", "9", "--group-by", "stem"], { RANK: String(rank), WORLD_SIZE: "2", S3X_WORKER: `${worker}/2` }));
    }
    assertWholeStems(workers, keys, "2 ranks × 2 DataLoader workers, --shuffle 9");
    // The same split per object (the default) puts some sample's files with different workers: what --group-by is for.
    const perObject = await Promise.all([0, 1, 2].map((i) => catTar(["--shard", `${i}/3`])));
    assert.throws(() => assertWholeStems(perObject, keys, "per object"), /torn between workers/);
  });

  it("cat --tar --shuffle SEED --group-by stem: stems adjacent and in key order, the order of stems set by the seed", async () => {
    const a = await catTar(["--shuffle", "1", "--group-by", "stem"]);
    const again = await catTar(["--shuffle", "1", "--group-by", "stem"]);
    const b = await catTar(["--shuffle", "2", "--group-by", "stem"]);
    assertWholeStems([a], keys, "--shuffle 1");
    assertWholeStems([b], keys, "--shuffle 2");
    assert.deepEqual(a, again, "the same seed, the same order");
    const stemsOf = (names: string[]) => names.map(stem).filter((s, i, all) => i === 0 || all[i - 1] !== s);
    assert.notDeepEqual(stemsOf(a), stemsOf(b), "another seed, another order of stems");
    assert.notDeepEqual(stemsOf(a), [...new Set(keys.map(stem))], "not the listing order");
  });

  it("--shard-balance count with --group-by counts stems (within 1 per worker), and --debug says so", async () => {
    const shares = await Promise.all([0, 1, 2, 3].map((i) => catTar(["--shard", `${i}/4`, "--group-by", "stem", "--shard-balance", "count"])));
    assertWholeStems(shares, keys, "count of stems, 4 workers");
    const stems = shares.map((share) => new Set(share.map(stem)).size);
    assert.ok(Math.max(...stems) - Math.min(...stems) <= 1, `stems per worker: ${stems.join(", ")}`);
    const debug = ok(await s3x(["cat", `s3://${bucket}/train/`, "--tar", "--shard", "1/4", "--group-by", "stem", "--shard-balance", "count", "--debug"]));
    assert.match(debug.stderr, new RegExp(`shard 1 of 4, from --shard 1/4: ${stems[1]} of the 15 stems, ${shares[1]!.length} of the ${keys.length} objects, \\d+ bytes \\(balanced by count of stems\\)`));
    // 15 stems among 16 workers leave one worker nothing, though there are more objects than workers.
    const idle = ok(await s3x(["cat", `s3://${bucket}/train/`, "--tar", "--shard", "15/16", "--group-by", "stem", "--shard-balance", "count"]));
    assert.deepEqual(await tarMembers(idle.stdout), []);
    assert.match(idle.stderr, new RegExp(`this worker's share is empty: 15 stems \\(${keys.length} objects\\) split 16 ways`));
  });

  it("cp -r (download) --shard --shuffle --group-by stem: each worker's files are whole stems; the dry run lists each stem's objects together, in key order", async () => {
    const shares: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const out = join(dir, `cp-${i}`);
      ok(await s3x(["cp", "-r", `s3://${bucket}/train/`, out, "--shard", `${i}/3`, "--shuffle", "4", "--group-by", "stem"]));
      shares.push(await filesUnder(out));
    }
    assertWholeStems(shares, keys, "cp -r, 3 workers", false);
    const planned = ok(await s3x(["cp", "-r", `s3://${bucket}/train/`, join(dir, "never"), "--shuffle", "4", "--group-by", "stem", "--dryrun"]));
    const listed = planned.stdout.toString().split("\n").filter(Boolean).map((line) => /s3:\/\/[^/]+\/(\S+) to /.exec(line)?.[1] ?? line);
    assertWholeStems([listed], keys, "cp -r --dryrun");
  });

  it("--from a manifest whose samples' files are scattered: cat --tar and cp --from keep each stem with one worker, together, in key order", async () => {
    // All .jpg first, then the rest in reverse: no two files of a sample are next to each other.
    const scattered = [...keys.filter((k) => k.endsWith(".jpg")), ...keys.filter((k) => !k.endsWith(".jpg")).reverse()];
    const manifest = join(dir, "manifest.txt");
    await writeFile(manifest, scattered.map((k) => `s3://${bucket}/${k}`).join("\n"));
    const gathered = tarMembers(ok(await s3x(["cat", "--from", manifest, "--tar", "--group-by", "stem"])).stdout);
    assertWholeStems([await gathered], keys, "cat --from --group-by stem");
    const shares = await Promise.all([0, 1].map(async (i) => tarMembers(ok(await s3x(["cat", "--from", manifest, "--tar", "--shard", `${i}/2`, "--shuffle", "3", "--group-by", "stem"])).stdout)));
    assertWholeStems(shares, keys, "cat --from --shard I/2 --shuffle 3");
    const copied: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const out = join(dir, `from-${i}`);
      ok(await s3x(["cp", "--from", manifest, `s3://${bucket}/train/`, out, "--shard", `${i}/2`, "--group-by", "stem"]));
      copied.push(await filesUnder(out));
    }
    assertWholeStems(copied, keys, "cp --from --shard I/2", false);
  });

  it("sync --shard --group-by stem copies whole stems; rm -r --shard --group-by stem deletes whole stems (refused without --shard); a bad value or a single object is refused", async () => {
    const synced: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const out = join(dir, `sync-${i}`);
      ok(await s3x(["sync", `s3://${bucket}/train/`, out, "--shard", `${i}/2`, "--group-by", "stem"]));
      synced.push(await filesUnder(out));
    }
    assertWholeStems(synced, keys, "sync --shard I/2", false);

    const deleting: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const res = ok(await s3x(["rm", "-r", `s3://${bucket}/train/`, "--shard", `${i}/3`, "--group-by", "stem", "--dryrun"]));
      deleting.push(res.stdout.toString().split("\n").filter(Boolean).map((line) => /s3:\/\/[^/]+\/(\S+)/.exec(line)?.[1] ?? line));
    }
    assertWholeStems(deleting, keys, "rm -r --shard I/3 --dryrun", false);

    for (const [args, message] of [
      [["rm", "-r", `s3://${bucket}/train/`, "--group-by", "stem"], /rm takes --group-by only with --shard/],
      [["cat", `s3://${bucket}/train/`, "--group-by", "prefix"], /invalid --group-by "prefix": expected stem/],
      [["cp", `s3://${bucket}/${keys[0]}`, join(dir, "one"), "--group-by", "stem"], /--group-by .*go with --recursive or --from/],
    ] as const) {
      const res = await s3x([...args]);
      assert.equal(res.code, 2, `${args.join(" ")}: ${res.stderr}`);
      assert.match(res.stderr, message);
      assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
      assert.equal(res.stdout.length, 0);
    }
    const left = ok(await s3x(["ls", "-r", `s3://${bucket}/train/`]));
    assert.equal(left.stdout.toString().trim().split("\n").length, keys.length, "nothing deleted");
  });
});
