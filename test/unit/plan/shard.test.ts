import assert from "node:assert/strict";
import { UsageError } from "../../../src/plan/location.js";
import { assignShards, describeShard, flatShard, parseShardOption, pickShard, shardOfKey } from "../../../src/plan/shard.js";
import { assertGoodSplit, seededRandom } from "../../support/shard-checks.js";

interface Keyed {
  key: string;
  size: number;
}

/** 10,000 keys: mostly small, a tenth empty, a few huge (up to 50 GiB), as a real training set's listing. */
function randomListing(seed: number, count = 10_000): Keyed[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const roll = random();
    const size = roll < 0.1 ? 0 : roll < 0.999 ? Math.floor(random() * 64 * 1024 * 1024) : Math.floor(random() * 50 * 1024 ** 3);
    return { key: `train/shard-${String(i).padStart(6, "0")}.tar`, size };
  });
}

describe("plan/shard: assignShards and pickShard", function () {
  this.timeout(60_000);

  for (const seed of [1, 2025]) {
    it(`splits 10,000 keys of random sizes for N = 1..17: disjoint, whole, balanced by bytes, stable (seed ${seed})`, () => {
      const listing = randomListing(seed);
      assert.ok(listing.some((e) => e.size === 0) && listing.some((e) => e.size > 4 * 1024 ** 3), "the listing has empty and huge entries");
      for (let n = 1; n <= 17; n++) assertGoodSplit(listing, n, (e) => e.size, `seed ${seed}, N=${n}`);
    });
  }

  it("depends only on the entries and sizes: a copy of the listing splits the same", () => {
    const listing = randomListing(7, 2000);
    const copy = listing.map((e) => ({ ...e }));
    assert.deepEqual(assignShards(copy, 5, (e) => e.size), assignShards(listing, 5, (e) => e.size));
  });

  it("spreads empty entries round-robin rather than piling them on shard 0", () => {
    const empty = Array.from({ length: 10_000 }, (_, i) => ({ key: `e${i}`, size: 0 }));
    const shards = assignShards(empty, 8, (e) => e.size);
    const counts = new Array<number>(8).fill(0);
    for (const s of shards) counts[s]++;
    assert.deepEqual(counts, new Array<number>(8).fill(1250));
    assert.deepEqual(shards.slice(0, 10), [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
  });

  it("balances by bytes, not by count: one huge entry gets a shard of its own", () => {
    const entries = [{ size: 1000 }, ...Array.from({ length: 10 }, () => ({ size: 100 }))];
    const shards = assignShards(entries, 2, (e) => e.size);
    assert.deepEqual(shards, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it("leaves shards empty only when there are fewer entries than workers", () => {
    assert.deepEqual(assignShards([{ size: 5 }, { size: 0 }], 4, (e) => e.size), [0, 1]);
    assert.deepEqual(pickShard([{ size: 5 }], { index: 3, count: 4 }, (e) => e.size), []);
    assert.deepEqual(assignShards([], 3, () => 0), []);
  });

  it("--shard-balance count: object counts within 1 of each other for N = 1..17, bytes balanced among equal counts", () => {
    const listing = randomListing(3, 5000);
    for (let n = 1; n <= 17; n++) {
      const counts = new Array<number>(n).fill(0);
      for (const shard of assignShards(listing, n, (e) => e.size, "count")) counts[shard]++;
      assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `N=${n}: ${counts.join(",")}`);
      assert.deepEqual(assignShards(listing, n, (e) => e.size, "count"), assignShards(listing, n, (e) => e.size, "count"), "the same split when run again");
    }
    // What the issue measured: balanced by bytes, ranks get different counts; by count they do not.
    const skewed = [{ size: 1000 }, ...Array.from({ length: 60 }, () => ({ size: 10 }))];
    const countsOf = (balance: "bytes" | "count") => [0, 1].map((index) => pickShard(skewed, { index, count: 2 }, (e) => e.size, balance).length);
    assert.deepEqual(countsOf("bytes"), [1, 60]);
    assert.deepEqual(countsOf("count"), [30, 31]);
    // Sizes still count among shards of equal counts: the two big entries go to different shards.
    assert.deepEqual(assignShards([{ size: 100 }, { size: 1 }, { size: 100 }, { size: 1 }], 2, (e) => e.size, "count"), [0, 1, 1, 0]);
  });

  it("refuses a bad count, index or size (a programming error, not user input)", () => {
    assert.throws(() => assignShards([1], 0, (n) => n), RangeError);
    assert.throws(() => assignShards([1], 1.5, (n) => n), RangeError);
    assert.throws(() => assignShards([-1], 2, (n) => n), /entry size must be a whole number of bytes, not -1/);
    assert.throws(() => assignShards([NaN], 2, (n) => n), /not NaN/);
    assert.throws(() => pickShard([1], { index: 2, count: 2 }, (n) => n), /shard index 2 is not in 0..1/);
  });
});

describe("plan/shard: parseShardOption", () => {
  const usage = (pattern: RegExp) => (err: unknown) => err instanceof UsageError && pattern.test(err.message);

  it("reads I/N", () => {
    assert.deepEqual(parseShardOption("3/8", {}), { index: 3, count: 8, source: "--shard 3/8" });
    assert.deepEqual(parseShardOption("0/1", {}), { index: 0, count: 1, source: "--shard 0/1" });
    assert.deepEqual(parseShardOption("3/8", {}, 8), { index: 3, count: 8, source: "--shard 3/8" });
  });

  it("refuses malformed I/N, naming the value and the expected form", () => {
    for (const bad of ["8/8", "9/8", "-1/4", "a/b", "3", "1/0", "0/0", "3/8/1", "", "1.5/4", "auto/2", "3 / 8"]) {
      assert.throws(() => parseShardOption(bad, {}), usage(new RegExp(`invalid --shard "${bad.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}": expected I/N`)), bad);
    }
  });

  it("refuses a --shard-count that disagrees with the count given", () => {
    assert.throws(() => parseShardOption("1/4", {}, 8), usage(/--shard-count 8 disagrees with --shard 1\/4/));
    assert.throws(() => parseShardOption("auto", { RANK: "1", WORLD_SIZE: "4" }, 8), usage(/--shard-count 8 disagrees with torchrun \(RANK=1, WORLD_SIZE=4\)/));
    assert.throws(() => parseShardOption("1/4", {}, 0), usage(/invalid --shard-count 0/));
  });

  it("finds torchrun", () => {
    assert.deepEqual(parseShardOption("auto", { RANK: "3", WORLD_SIZE: "8", LOCAL_RANK: "1" }), { index: 3, count: 8, source: "torchrun (RANK=3, WORLD_SIZE=8)" });
  });

  it("finds a Slurm job array by COUNT, by MIN/MAX, and with a step", () => {
    assert.deepEqual(parseShardOption("auto", { SLURM_ARRAY_TASK_ID: "2", SLURM_ARRAY_TASK_COUNT: "4" }), {
      index: 2,
      count: 4,
      source: "Slurm job array (SLURM_ARRAY_TASK_ID=2, SLURM_ARRAY_TASK_COUNT=4)",
    });
    // --array=1-8: IDs 1..8 are shards 0..7.
    assert.deepEqual(parseShardOption("auto", { SLURM_ARRAY_TASK_ID: "8", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "8" }), {
      index: 7,
      count: 8,
      source: "Slurm job array (SLURM_ARRAY_TASK_ID=8, SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_MAX=8)",
    });
    // What Slurm sets for --array=0-15:4 (tasks 0, 4, 8, 12), task 8: shard 2 of 4.
    const stepped = { SLURM_ARRAY_TASK_ID: "8", SLURM_ARRAY_TASK_COUNT: "4", SLURM_ARRAY_TASK_MIN: "0", SLURM_ARRAY_TASK_MAX: "12", SLURM_ARRAY_TASK_STEP: "4" };
    assert.deepEqual(parseShardOption("auto", stepped), {
      index: 2,
      count: 4,
      source: "Slurm job array (SLURM_ARRAY_TASK_ID=8, SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_MAX=12, SLURM_ARRAY_TASK_STEP=4)",
    });
    // --array=0-15:4 rounds MAX down to 12; a MAX of 15 with step 4 still makes 4 tasks.
    assert.equal(parseShardOption("auto", { ...stepped, SLURM_ARRAY_TASK_MAX: "15", SLURM_ARRAY_TASK_ID: "12" }).index, 3);
  });

  it("refuses a Slurm array whose task's position cannot be told from the variables", () => {
    // --array=1,3,7,20: 4 tasks, MIN 1, MAX 20, no single step.
    const uneven = { SLURM_ARRAY_TASK_ID: "7", SLURM_ARRAY_TASK_COUNT: "4", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "20", SLURM_ARRAY_TASK_STEP: "1" };
    assert.throws(() => parseShardOption("auto", uneven), usage(/the Slurm array is not an evenly spaced range .* would make 20 tasks/));
    assert.throws(() => parseShardOption("auto", { ...uneven, SLURM_ARRAY_TASK_ID: "6", SLURM_ARRAY_TASK_COUNT: "10", SLURM_ARRAY_TASK_STEP: "2", SLURM_ARRAY_TASK_MAX: "19" }), usage(/SLURM_ARRAY_TASK_ID=6 is not one of the array's tasks/));
    assert.throws(() => parseShardOption("auto", { SLURM_ARRAY_TASK_ID: "3" }), usage(/SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN\/MAX/));
    assert.throws(() => parseShardOption("auto", { SLURM_ARRAY_TASK_ID: "3", SLURM_ARRAY_TASK_MIN: "0" }), usage(/SLURM_ARRAY_TASK_MIN is set without SLURM_ARRAY_TASK_MAX/));
    assert.throws(() => parseShardOption("auto", { SLURM_ARRAY_TASK_ID: "4", SLURM_ARRAY_TASK_COUNT: "4" }), usage(/SLURM_ARRAY_TASK_ID=4 is not below the worker count 4/));
    assert.throws(() => parseShardOption("auto", { SLURM_ARRAY_TASK_ID: "1", SLURM_ARRAY_TASK_MIN: "5", SLURM_ARRAY_TASK_MAX: "2" }), usage(/SLURM_ARRAY_TASK_MAX=2 is below SLURM_ARRAY_TASK_MIN=5/));
  });

  it("finds a Kubernetes Indexed Job, its count from --shard-count or S3X_SHARD_COUNT", () => {
    assert.deepEqual(parseShardOption("auto", { JOB_COMPLETION_INDEX: "5" }, 6), { index: 5, count: 6, source: "Kubernetes Indexed Job (JOB_COMPLETION_INDEX=5, --shard-count 6)" });
    assert.deepEqual(parseShardOption("auto", { JOB_COMPLETION_INDEX: "5", S3X_SHARD_COUNT: "6" }), { index: 5, count: 6, source: "Kubernetes Indexed Job (JOB_COMPLETION_INDEX=5, S3X_SHARD_COUNT=6)" });
    assert.equal(parseShardOption("auto", { JOB_COMPLETION_INDEX: "5", S3X_SHARD_COUNT: "6" }, 6).count, 6);
    assert.throws(() => parseShardOption("auto", { JOB_COMPLETION_INDEX: "5" }), usage(/JOB_COMPLETION_INDEX is set \(Kubernetes Indexed Job\) but the number of workers is not: give --shard-count N or set S3X_SHARD_COUNT/));
    assert.throws(() => parseShardOption("auto", { JOB_COMPLETION_INDEX: "5", S3X_SHARD_COUNT: "6" }, 7), usage(/--shard-count 7 disagrees with S3X_SHARD_COUNT=6/));
    assert.throws(() => parseShardOption("auto", { JOB_COMPLETION_INDEX: "6" }, 6), usage(/JOB_COMPLETION_INDEX=6 is not below the worker count 6/));
    assert.throws(() => parseShardOption("auto", { JOB_COMPLETION_INDEX: "1", S3X_SHARD_COUNT: "0" }), usage(/S3X_SHARD_COUNT="0" is not a whole number of at least 1/));
  });

  it("finds Open MPI, then PMI (MPICH, Intel MPI)", () => {
    assert.deepEqual(parseShardOption("auto", { OMPI_COMM_WORLD_RANK: "0", OMPI_COMM_WORLD_SIZE: "2" }), { index: 0, count: 2, source: "Open MPI (OMPI_COMM_WORLD_RANK=0, OMPI_COMM_WORLD_SIZE=2)" });
    assert.deepEqual(parseShardOption("auto", { PMI_RANK: "15", PMI_SIZE: "16" }), { index: 15, count: 16, source: "MPI (PMI_RANK=15, PMI_SIZE=16)" });
  });

  it("finds plain srun (SLURM_PROCID/SLURM_NTASKS); a batch script's SLURM_PROCID alone is no launcher", () => {
    assert.deepEqual(parseShardOption("auto", { SLURM_PROCID: "3", SLURM_NTASKS: "8" }), { index: 3, count: 8, source: "Slurm (SLURM_PROCID=3, SLURM_NTASKS=8)" });
    assert.throws(() => parseShardOption("auto", { SLURM_PROCID: "8", SLURM_NTASKS: "8" }), usage(/SLURM_PROCID=8 is not below the worker count 8/));
    assert.throws(() => parseShardOption("auto", { SLURM_PROCID: "0" }), usage(/no launcher found/));
    // sbatch --array=0-15 runs its script with SLURM_PROCID=0 and SLURM_NTASKS=1: one task splits nothing.
    const arrayTask = { SLURM_ARRAY_TASK_ID: "5", SLURM_ARRAY_TASK_COUNT: "16", SLURM_PROCID: "0", SLURM_NTASKS: "1" };
    assert.deepEqual(parseShardOption("auto", arrayTask), { index: 5, count: 16, source: "Slurm job array (SLURM_ARRAY_TASK_ID=5, SLURM_ARRAY_TASK_COUNT=16)" });
  });

  it("takes launchers that agree (srun --mpi sets PMI_RANK too), and refuses ones that disagree, naming both on one line", () => {
    assert.equal(parseShardOption("auto", { RANK: "3", WORLD_SIZE: "8", SLURM_PROCID: "3", SLURM_NTASKS: "8", PMI_RANK: "3", PMI_SIZE: "8" }).source, "torchrun (RANK=3, WORLD_SIZE=8)");
    const refused = (env: Record<string, string>, pattern: RegExp) =>
      assert.throws(() => parseShardOption("auto", env), (err: unknown) => usage(pattern)(err) && !(err as Error).message.includes("\n"), JSON.stringify(env));
    refused({ RANK: "1", WORLD_SIZE: "4", SLURM_PROCID: "3", SLURM_NTASKS: "8" }, /^--shard auto: torchrun \(RANK=1, WORLD_SIZE=4\) and Slurm \(SLURM_PROCID=3, SLURM_NTASKS=8\) disagree/);
    refused({ RANK: "1", WORLD_SIZE: "4", SLURM_PROCID: "2", SLURM_NTASKS: "4" }, /torchrun .* and Slurm .* disagree/);
    refused({ SLURM_ARRAY_TASK_ID: "2", SLURM_ARRAY_TASK_COUNT: "3", JOB_COMPLETION_INDEX: "3", S3X_SHARD_COUNT: "4" }, /Slurm job array .* and Kubernetes Indexed Job .* disagree/);
    refused({ OMPI_COMM_WORLD_RANK: "4", OMPI_COMM_WORLD_SIZE: "5", PMI_RANK: "5", PMI_SIZE: "6" }, /Open MPI .* and MPI .* disagree/);
    // Without torchrun's own variable, a world that is a multiple of srun's is still two answers.
    refused({ RANK: "5", WORLD_SIZE: "16", SLURM_PROCID: "1", SLURM_NTASKS: "2" }, /torchrun .* and Slurm .* disagree/);
  });

  it("takes torchrun's ranks when torchrun runs one agent per srun task, mpirun rank or pod (TORCHELASTIC_RUN_ID, a multiple)", () => {
    const nested = { RANK: "13", WORLD_SIZE: "16", TORCHELASTIC_RUN_ID: "job-7", SLURM_PROCID: "1", SLURM_NTASKS: "2" };
    assert.deepEqual(parseShardOption("auto", nested), { index: 13, count: 16, source: "torchrun (RANK=13, WORLD_SIZE=16)" });
    assert.throws(() => parseShardOption("auto", { ...nested, SLURM_NTASKS: "3" }), usage(/torchrun .* and Slurm .* disagree/));
    // An Indexed Job's pods as torchrun's nodes: the pod gives no count, and needs none.
    assert.equal(parseShardOption("auto", { RANK: "9", WORLD_SIZE: "32", JOB_COMPLETION_INDEX: "2" }).index, 9);
  });

  it("splits the shard among DataLoader workers with S3X_WORKER=ID/COUNT, with --shard auto or I/N", () => {
    assert.deepEqual(parseShardOption("auto", { RANK: "1", WORLD_SIZE: "2", S3X_WORKER: "3/4" }), {
      index: 1,
      count: 2,
      source: "torchrun (RANK=1, WORLD_SIZE=2)",
      within: { index: 3, count: 4, source: "S3X_WORKER=3/4" },
    });
    assert.deepEqual(parseShardOption("1/2", { S3X_WORKER: "0/2" }).within, { index: 0, count: 2, source: "S3X_WORKER=0/2" });
    // One process (no launcher) with DataLoader workers: the whole set is its shard.
    assert.deepEqual(parseShardOption("auto", { S3X_WORKER: "1/3" }), { index: 0, count: 1, source: "one process (no launcher found)", within: { index: 1, count: 3, source: "S3X_WORKER=1/3" } });
    assert.equal(describeShard(parseShardOption("auto", { RANK: "1", WORLD_SIZE: "2", S3X_WORKER: "3/4" })), "shard 1 of 2, from torchrun (RANK=1, WORLD_SIZE=2); part 3 of 4 of it, from S3X_WORKER=3/4");
    assert.deepEqual(flatShard({ index: 1, count: 2, source: "", within: { index: 3, count: 4, source: "" } }), { index: 7, count: 8 });
    for (const bad of ["4/4", "1", "a/4", "1/0", "-1/4", "1/4/2"]) {
      assert.throws(() => parseShardOption("auto", { RANK: "0", WORLD_SIZE: "1", S3X_WORKER: bad }), usage(new RegExp(`^S3X_WORKER="${bad.replace(/[/]/g, "\\/")}" is not ID/COUNT`)), bad);
    }
  });

  it("ranks × DataLoader workers from the environment read every entry exactly once, for every combination", () => {
    const listing = randomListing(11, 3000);
    for (const balance of ["bytes", "count"] as const) {
      for (let ranks = 1; ranks <= 5; ranks++) {
        for (let workers = 1; workers <= 5; workers++) {
          const seen = new Map<Keyed, string>();
          for (let rank = 0; rank < ranks; rank++) {
            const rankShare = pickShard(listing, parseShardOption("auto", { RANK: String(rank), WORLD_SIZE: String(ranks) }), (e) => e.size, balance);
            const union: Keyed[] = [];
            for (let worker = 0; worker < workers; worker++) {
              const spec = parseShardOption("auto", { RANK: String(rank), WORLD_SIZE: String(ranks), S3X_WORKER: `${worker}/${workers}` });
              for (const entry of pickShard(listing, spec, (e) => e.size, balance)) {
                const label = `${balance} ${ranks}×${workers}`;
                assert.equal(seen.has(entry), false, `${label}: ${entry.key} read by ${seen.get(entry)} and ${rank}/${worker}`);
                seen.set(entry, `${rank}/${worker}`);
                union.push(entry);
              }
            }
            // A rank's workers read exactly its shard: the rank's share does not depend on its number of workers.
            assert.deepEqual(new Set(union), new Set(rankShare));
          }
          assert.equal(seen.size, listing.length, `${balance} ${ranks}×${workers}: every entry read`);
        }
      }
    }
  });

  it("refuses malformed launcher values, naming the variable", () => {
    assert.throws(() => parseShardOption("auto", { RANK: "x", WORLD_SIZE: "4" }), usage(/RANK="x" is not a whole number/));
    assert.throws(() => parseShardOption("auto", { RANK: "1", WORLD_SIZE: "2.5" }), usage(/WORLD_SIZE="2.5" is not a whole number of at least 1/));
    assert.throws(() => parseShardOption("auto", { RANK: "-1", WORLD_SIZE: "4" }), usage(/RANK="-1" is not a whole number/));
    assert.throws(() => parseShardOption("auto", { RANK: "4", WORLD_SIZE: "4" }), usage(/RANK=4 is not below the worker count 4 \(torchrun/));
    assert.throws(() => parseShardOption("auto", { RANK: "1", WORLD_SIZE: "0" }), usage(/WORLD_SIZE="0" is not a whole number of at least 1/));
    assert.throws(() => parseShardOption("auto", { RANK: "1" }), usage(/RANK is set but WORLD_SIZE is not \(torchrun\)/));
    assert.throws(() => parseShardOption("auto", { OMPI_COMM_WORLD_SIZE: "4" }), usage(/OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not \(Open MPI\)/));
    assert.throws(() => parseShardOption("auto", { PMI_RANK: "2", PMI_SIZE: "2" }), usage(/PMI_RANK=2 is not below the worker count 2/));
  });

  it("says what it looked for when no launcher is found (empty variables count as unset)", () => {
    assert.throws(
      () => parseShardOption("auto", { RANK: "", PATH: "/usr/bin" }),
      usage(/^--shard auto: no launcher found; looked for torchrun \(RANK\/WORLD_SIZE\), Slurm \(SLURM_PROCID\/SLURM_NTASKS, under srun\), Slurm job array \(.*\), Kubernetes Indexed Job \(JOB_COMPLETION_INDEX .*\), Open MPI \(.*\), MPI \(PMI_RANK\/PMI_SIZE\)\. Give --shard I\/N instead$/),
    );
  });
});

describe("plan/shard: shardOfKey (rm -r --shard)", () => {
  it("gives each key one shard from the key alone, spread evenly enough over 10,000 keys", () => {
    const keys = Array.from({ length: 10_000 }, (_, i) => `data/sample-${i}.jpg`);
    for (const count of [1, 2, 7, 16]) {
      const counts = new Array<number>(count).fill(0);
      for (const key of keys) {
        const shard = shardOfKey(key, count);
        assert.equal(shardOfKey(key, count), shard, "the same every time");
        counts[shard]++;
      }
      // Expected 10,000/count each; a hash leaves well under 20 % of it either way at these sizes.
      for (const n of counts) assert.ok(Math.abs(n - 10_000 / count) < 0.2 * (10_000 / count), `count ${count}: ${counts.join(",")}`);
    }
  });

  it("does not depend on which other keys are still listed (workers delete from the listing they split)", () => {
    const all = Array.from({ length: 100 }, (_, i) => `k${i}`);
    const before = all.map((key) => shardOfKey(key, 3));
    const after = all.filter((_, i) => i % 2 === 0).map((key) => shardOfKey(key, 3));
    assert.deepEqual(after, before.filter((_, i) => i % 2 === 0));
  });
});
