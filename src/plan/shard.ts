import { createHash } from "node:crypto";
import { UsageError } from "./location.js";

/**
 * Splitting a listing (or a manifest) among N workers, as SageMaker's
 * ShardedByS3Key does: every worker lists the same set, computes the same
 * split and takes its own part, so no coordinator is needed. The split must
 * therefore depend only on what every worker sees (the entries in listing
 * order and their sizes), never on timing, the machine or the worker.
 */

/** Which part of the split this process takes. */
export interface ShardSpec {
  /** 0-based: the shard this worker takes. */
  index: number;
  /** How many workers share the set. */
  count: number;
  /** Where index and count came from, for the line saying which launcher was found ("torchrun (RANK=3, WORLD_SIZE=8)"). */
  source: string;
  /**
   * A further split of this shard among the processes that share it (a
   * DataLoader's workers, from S3X_WORKER): each takes its part of the
   * shard, so the shard's own promises (its byte or object count) hold
   * whatever the number of workers.
   */
  within?: ShardSpec;
}

/** How a split balances its shards: their bytes (transfer time) or their object counts (DDP's steps per rank). */
export type ShardBalance = "bytes" | "count";

export const SHARD_BALANCES: readonly ShardBalance[] = ["bytes", "count"];

/** One launcher's reading of the environment: absent, or found with its index and count. */
type LauncherReading = { index: number; count: number; source: string } | undefined;

/** The variable a DataLoader worker (or any per-process pool) sets to take its part of its rank's shard: ID/COUNT. */
export const WORKER_VARIABLE = "S3X_WORKER";

/**
 * Reads `--shard I/N` or `--shard auto`. `auto` asks every launcher it
 * knows (torchrun, Slurm, Kubernetes Indexed Jobs, MPI): where several are
 * set they must agree (see agreed()). `shardCount` is `--shard-count`: the
 * count for Kubernetes, which only gives the index; with any other source
 * it must agree with the count found (two counts that disagree would shard
 * the set two ways: refused). Either way S3X_WORKER=ID/COUNT, when set,
 * splits the shard further among the process's DataLoader workers.
 */
export function parseShardOption(value: string, env: NodeJS.ProcessEnv, shardCount?: number): ShardSpec {
  if (shardCount !== undefined && !(Number.isSafeInteger(shardCount) && shardCount >= 1)) {
    throw new UsageError(`invalid --shard-count ${shardCount}: expected a whole number of workers, 1 or more`);
  }
  const worker = workerReading(env);
  const auto = value.trim() === "auto";
  const spec = auto ? fromLauncher(env, shardCount, worker !== undefined) : fromExplicit(value);
  // A Kubernetes Indexed Job took --shard-count as its count, and checked it.
  const countUsed = auto && variable(env, "JOB_COMPLETION_INDEX") !== undefined;
  if (shardCount !== undefined && !countUsed && shardCount !== spec.count) {
    throw new UsageError(`--shard-count ${shardCount} disagrees with ${spec.source}: the workers would split the set differently`);
  }
  return worker ? { ...spec, within: worker } : spec;
}

/** "shard 1 of 4, from torchrun (…)", and the worker's part of it: the line --shard prints. */
export function describeShard(spec: ShardSpec): string {
  const part = spec.within ? `; part ${spec.within.index} of ${spec.within.count} of it, from ${spec.within.source}` : "";
  return `shard ${spec.index} of ${spec.count}, from ${spec.source}${part}`;
}

/**
 * The shard with its worker's part flattened into one index of one count
 * (rank-major), for splits that take each key on its own (rm's hash).
 */
export function flatShard(spec: ShardSpec): { index: number; count: number } {
  if (!spec.within) return { index: spec.index, count: spec.count };
  const inner = flatShard(spec.within);
  return { index: spec.index * inner.count + inner.index, count: spec.count * inner.count };
}

function fromExplicit(value: string): ShardSpec {
  const expected = `invalid --shard "${value}": expected I/N, the 0-based index I of this worker among N workers (0 <= I < N), or "auto"`;
  const match = /^\s*(\d+)\/(\d+)\s*$/.exec(value);
  if (!match) throw new UsageError(expected);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(count) || count < 1 || index >= count) throw new UsageError(expected);
  return { index, count, source: `--shard ${index}/${count}` };
}

/** S3X_WORKER=ID/COUNT: which of its process's workers this one is; malformed is refused, naming the variable. */
function workerReading(env: NodeJS.ProcessEnv): ShardSpec | undefined {
  const raw = variable(env, WORKER_VARIABLE);
  if (raw === undefined) return undefined;
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(count) || count < 1 || index >= count) {
    throw new UsageError(`${WORKER_VARIABLE}="${raw}" is not ID/COUNT, the 0-based index of this worker among COUNT (as torch.utils.data.get_worker_info() gives id/num_workers)`);
  }
  return { index, count, source: `${WORKER_VARIABLE}=${index}/${count}` };
}

const KUBERNETES = "Kubernetes Indexed Job";

/** The launchers `--shard auto` knows, in the order they are named. */
const LAUNCHERS: readonly { name: string; read: (env: NodeJS.ProcessEnv, shardCount: number | undefined) => LauncherReading; variables: string }[] = [
  { name: "torchrun", variables: "RANK/WORLD_SIZE", read: (env) => pair(env, "torchrun", "RANK", "WORLD_SIZE") },
  { name: "Slurm", variables: "SLURM_PROCID/SLURM_NTASKS, under srun", read: slurmStep },
  { name: "Slurm job array", variables: "SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN/MAX", read: slurmArray },
  { name: KUBERNETES, variables: "JOB_COMPLETION_INDEX with --shard-count or S3X_SHARD_COUNT", read: kubernetesIndexedJob },
  { name: "Open MPI", variables: "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE", read: (env) => pair(env, "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE") },
  { name: "MPI", variables: "PMI_RANK/PMI_SIZE", read: (env) => pair(env, "MPI", "PMI_RANK", "PMI_SIZE") },
];

function fromLauncher(env: NodeJS.ProcessEnv, shardCount: number | undefined, hasWorker: boolean): ShardSpec {
  const read = (launchers: typeof LAUNCHERS) => launchers.map((launcher) => launcher.read(env, shardCount)).filter((r): r is NonNullable<LauncherReading> => r !== undefined);
  // A pod of an Indexed Job that runs torchrun (its index as the node rank) gives no count: torchrun's answer stands alone.
  const uncounted = variable(env, "JOB_COMPLETION_INDEX") !== undefined && shardCount === undefined && variable(env, "S3X_SHARD_COUNT") === undefined;
  const others = read(LAUNCHERS.filter((l) => l.name !== KUBERNETES));
  const kubernetes = uncounted && others.length > 0 ? [] : read(LAUNCHERS.filter((l) => l.name === KUBERNETES));
  const readings = [...others, ...kubernetes];
  if (readings.length > 0) return agreed(readings, env);
  // One process with DataLoader workers (python train.py, no launcher): the whole set is its shard.
  if (hasWorker) return { index: 0, count: 1, source: "one process (no launcher found)" };
  const lookedFor = LAUNCHERS.map((l) => `${l.name} (${l.variables})`).join(", ");
  throw new UsageError(`--shard auto: no launcher found; looked for ${lookedFor}. Give --shard I/N instead`);
}

/**
 * One answer from every launcher found. A launcher of one task splits
 * nothing (a batch script's SLURM_NTASKS=1), so it never disagrees. The
 * rest must give the same index and count (srun --mpi sets PMI_RANK equal
 * to SLURM_PROCID), with one exception, torchrun started by another
 * launcher (one agent per srun task, per mpirun rank, per pod): its workers
 * carry TORCHELASTIC_RUN_ID, its world is a multiple of the other's, and
 * its ranks are the ones training runs on. Any other difference means two
 * launchers would split the set two ways: refused, naming both, rather than
 * guessed (a guess reads some objects twice and others never).
 */
function agreed(readings: readonly NonNullable<LauncherReading>[], env: NodeJS.ProcessEnv): ShardSpec {
  const splitting = readings.filter((r) => r.count > 1);
  if (splitting.length === 0) return readings[0];
  const [chosen, ...others] = splitting;
  const torchrunAgent = chosen.source.startsWith("torchrun") && variable(env, "TORCHELASTIC_RUN_ID") !== undefined;
  for (const other of others) {
    if (other.index === chosen.index && other.count === chosen.count) continue;
    if (torchrunAgent && chosen.count % other.count === 0) continue;
    throw new UsageError(`--shard auto: ${chosen.source} and ${other.source} disagree on this worker's shard; give --shard I/N instead`);
  }
  return chosen;
}

/** A rank/size pair (torchrun, MPI): both set, or neither; one without the other is refused, not skipped. */
function pair(env: NodeJS.ProcessEnv, launcher: string, indexName: string, countName: string): LauncherReading {
  const rawIndex = variable(env, indexName);
  const rawCount = variable(env, countName);
  if (rawIndex === undefined && rawCount === undefined) return undefined;
  if (rawIndex === undefined || rawCount === undefined) {
    const [set, unset] = rawIndex === undefined ? [countName, indexName] : [indexName, countName];
    throw new UsageError(`--shard auto: ${set} is set but ${unset} is not (${launcher}); give --shard I/N instead`);
  }
  const index = wholeNumber(indexName, rawIndex, 0);
  const count = wholeNumber(countName, rawCount, 1);
  return checked(index, count, `${launcher} (${indexName}=${index}, ${countName}=${count})`, indexName);
}

/**
 * Plain srun: each task has SLURM_PROCID of SLURM_NTASKS. Unlike torchrun's
 * pair, one without the other is skipped, not refused: a batch script
 * (outside srun) has SLURM_PROCID=0 and SLURM_NTASKS only with --ntasks.
 */
function slurmStep(env: NodeJS.ProcessEnv): LauncherReading {
  if (variable(env, "SLURM_PROCID") === undefined || variable(env, "SLURM_NTASKS") === undefined) return undefined;
  return pair(env, "Slurm", "SLURM_PROCID", "SLURM_NTASKS");
}

/**
 * Slurm job arrays number their tasks MIN..MAX, maybe with a step
 * (`--array=0-15:4` runs 0, 4, 8, 12): the shard index is the task's
 * position in that progression, (ID − MIN) / STEP. A list with uneven gaps
 * (`--array=1,3,7,20`) has no such position computable from the variables;
 * it shows as a COUNT that disagrees with the range, and is refused.
 */
function slurmArray(env: NodeJS.ProcessEnv): LauncherReading {
  const rawId = variable(env, "SLURM_ARRAY_TASK_ID");
  if (rawId === undefined) return undefined;
  const id = wholeNumber("SLURM_ARRAY_TASK_ID", rawId, 0);
  const optional = (name: string, least: number) => {
    const raw = variable(env, name);
    return raw === undefined ? undefined : wholeNumber(name, raw, least);
  };
  const taskCount = optional("SLURM_ARRAY_TASK_COUNT", 1);
  const min = optional("SLURM_ARRAY_TASK_MIN", 0);
  const max = optional("SLURM_ARRAY_TASK_MAX", 0);
  const step = optional("SLURM_ARRAY_TASK_STEP", 1) ?? 1;
  if ((min === undefined) !== (max === undefined)) {
    throw new UsageError(`--shard auto: SLURM_ARRAY_TASK_${min === undefined ? "MAX" : "MIN"} is set without SLURM_ARRAY_TASK_${min === undefined ? "MIN" : "MAX"} (Slurm job array)`);
  }
  if (taskCount === undefined && min === undefined) {
    throw new UsageError("--shard auto: SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN/MAX (Slurm job array); give --shard I/N instead");
  }
  const shown = [`SLURM_ARRAY_TASK_ID=${id}`];
  if (taskCount !== undefined) shown.push(`SLURM_ARRAY_TASK_COUNT=${taskCount}`);
  if (min === undefined || max === undefined) return checked(id, taskCount ?? 0, `Slurm job array (${shown.join(", ")})`, "SLURM_ARRAY_TASK_ID");
  shown.push(`SLURM_ARRAY_TASK_MIN=${min}`, `SLURM_ARRAY_TASK_MAX=${max}`);
  if (step !== 1) shown.push(`SLURM_ARRAY_TASK_STEP=${step}`);
  const source = `Slurm job array (${shown.join(", ")})`;
  if (max < min) throw new UsageError(`--shard auto: SLURM_ARRAY_TASK_MAX=${max} is below SLURM_ARRAY_TASK_MIN=${min}`);
  if (id < min || id > max || (id - min) % step !== 0) {
    throw new UsageError(`--shard auto: SLURM_ARRAY_TASK_ID=${id} is not one of the array's tasks (${source})`);
  }
  const rangeCount = Math.floor((max - min) / step) + 1;
  if (taskCount !== undefined && taskCount !== rangeCount) {
    throw new UsageError(
      `--shard auto: the Slurm array is not an evenly spaced range (${source} would make ${rangeCount} tasks): ` +
        "a task's shard cannot be told from its ID; use --array=MIN-MAX[:STEP], or give --shard I/N",
    );
  }
  return checked((id - min) / step, rangeCount, source, "SLURM_ARRAY_TASK_ID");
}

/** Kubernetes Indexed Jobs give each pod its index only; the count (`.spec.completions`) must come from the user. */
function kubernetesIndexedJob(env: NodeJS.ProcessEnv, shardCount: number | undefined): LauncherReading {
  const rawIndex = variable(env, "JOB_COMPLETION_INDEX");
  if (rawIndex === undefined) return undefined;
  const index = wholeNumber("JOB_COMPLETION_INDEX", rawIndex, 0);
  const rawCount = variable(env, "S3X_SHARD_COUNT");
  const envCount = rawCount === undefined ? undefined : wholeNumber("S3X_SHARD_COUNT", rawCount, 1);
  if (shardCount !== undefined && envCount !== undefined && shardCount !== envCount) {
    throw new UsageError(`--shard auto: --shard-count ${shardCount} disagrees with S3X_SHARD_COUNT=${envCount}`);
  }
  if (shardCount !== undefined) return checked(index, shardCount, `Kubernetes Indexed Job (JOB_COMPLETION_INDEX=${index}, --shard-count ${shardCount})`, "JOB_COMPLETION_INDEX");
  if (envCount !== undefined) return checked(index, envCount, `Kubernetes Indexed Job (JOB_COMPLETION_INDEX=${index}, S3X_SHARD_COUNT=${envCount})`, "JOB_COMPLETION_INDEX");
  throw new UsageError(
    "--shard auto: JOB_COMPLETION_INDEX is set (Kubernetes Indexed Job) but the number of workers is not: " +
      "give --shard-count N or set S3X_SHARD_COUNT to the Job's completions",
  );
}

function checked(index: number, count: number, source: string, indexName: string): ShardSpec {
  if (index >= count) throw new UsageError(`--shard auto: ${indexName}=${index} is not below the worker count ${count} (${source})`);
  return { index, count, source };
}

/** A variable's value, an empty one counting as unset (as shells' `VAR=` in a job script often leaves it). */
function variable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function wholeNumber(name: string, raw: string, least: number): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < least) {
    throw new UsageError(`--shard auto: ${name}="${raw}" is not a whole number${least > 0 ? ` of at least ${least}` : ""}`);
  }
  return value;
}

/**
 * The shard of each entry (same order as `entries`), balanced by bytes:
 * each entry, in input order, goes to the shard with the fewest bytes so
 * far, ties to the one with the fewest entries, then the lowest index.
 *
 * Why the byte totals differ by at most the largest entry L: suppose before
 * a step max − min ≤ L (true at the start, all zero). The entry (size s ≤ L)
 * goes to a shard holding the minimum m. If that shard becomes the maximum,
 * the new spread is at most (m + s) − m = s ≤ L, since no shard holds less
 * than m; otherwise the maximum is unchanged and the minimum did not
 * drop. The count tie-break only chooses among shards holding m, so it
 * keeps the bound, and it spreads empty files round-robin; it also makes
 * the first N entries land on N different shards (an untouched shard holds
 * m = 0 bytes and has the fewest entries), so no shard is empty when there
 * are at least N entries.
 *
 * By count (`--shard-balance count`) the order of the keys is swapped: the
 * entry goes to a shard with the fewest entries, ties to the fewest bytes.
 * The same argument with every size 1 bounds the counts' spread by 1 (what
 * DDP needs: the same number of steps on every rank, give or take one);
 * bytes are balanced only among the shards of equal count.
 *
 * A heap keeps each step O(log N), for millions of keys over many workers.
 */
export function assignShards<T>(entries: readonly T[], count: number, sizeOf: (entry: T) => number, balance: ShardBalance = "bytes"): number[] {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`shard count must be a whole number of at least 1, not ${count}`);
  const heap = new ShardHeap(count, balance);
  return entries.map((entry) => {
    const size = sizeOf(entry);
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`entry size must be a whole number of bytes, not ${size}`);
    return heap.addToLightest(size);
  });
}

/**
 * The entries of shard `spec.index`, in their input order; with
 * `spec.within`, this worker's part of that shard, split the same way. Two
 * steps rather than one split into count × workers: a rank's shard is then
 * the same whatever its number of DataLoader workers, and keeps the
 * promise of `balance` between ranks (object counts within 1 of each other
 * for DDP, not within the number of workers).
 */
export function pickShard<T>(entries: readonly T[], spec: Pick<ShardSpec, "index" | "count" | "within">, sizeOf: (entry: T) => number, balance: ShardBalance = "bytes"): T[] {
  if (!Number.isSafeInteger(spec.index) || spec.index < 0 || spec.index >= spec.count) {
    throw new RangeError(`shard index ${spec.index} is not in 0..${spec.count - 1}`);
  }
  const shards = assignShards(entries, spec.count, sizeOf, balance);
  const shard = entries.filter((_, i) => shards[i] === spec.index);
  return spec.within ? pickShard(shard, spec.within, sizeOf, balance) : shard;
}

/** A min-heap of shards ordered by (bytes, entries, index), or (entries, bytes, index) by count: the order assignShards picks in. */
class ShardHeap {
  private readonly bytes: number[];
  private readonly entries: number[];
  /** heap[0] is the lightest shard's index. */
  private readonly heap: number[];

  constructor(
    count: number,
    private readonly balance: ShardBalance,
  ) {
    this.bytes = new Array<number>(count).fill(0);
    this.entries = new Array<number>(count).fill(0);
    // 0..count-1 with all loads equal is already a valid heap (ordered by index).
    this.heap = Array.from({ length: count }, (_, i) => i);
  }

  /** Adds `size` bytes to the lightest shard; returns that shard. */
  addToLightest(size: number): number {
    const shard = this.heap[0];
    this.bytes[shard] += size;
    this.entries[shard] += 1;
    this.siftDown(0);
    return shard;
  }

  private lighter(a: number, b: number): boolean {
    const [first, second] = this.balance === "bytes" ? [this.bytes, this.entries] : [this.entries, this.bytes];
    if (first[a] !== first[b]) return first[a] < first[b];
    if (second[a] !== second[b]) return second[a] < second[b];
    return a < b;
  }

  private siftDown(at: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let lightest = at;
      if (left < heap.length && this.lighter(heap[left], heap[lightest])) lightest = left;
      if (right < heap.length && this.lighter(heap[right], heap[lightest])) lightest = right;
      if (lightest === at) return;
      [heap[at], heap[lightest]] = [heap[lightest], heap[at]];
      at = lightest;
    }
  }
}

/**
 * The shard of one key by a hash of it alone: for rm -r --shard, whose
 * workers change the listing they split (a worker that lists after another
 * deleted its part would compute another byte-balanced split, and leave
 * objects behind). Balanced by count on average, not by bytes: a deletion
 * costs the same whatever the object's size.
 */
export function shardOfKey(key: string, count: number): number {
  return createHash("sha256").update(key, "utf8").digest().readUInt32BE(0) % count;
}
