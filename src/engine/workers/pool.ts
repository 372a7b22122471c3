import type { Worker } from "node:worker_threads";
import type { AddressStats } from "../../net/pools.js";
import type { AttemptRouting } from "../../net/routing.js";
import type { S3Settings } from "../../s3/client.js";
import { RelayedFailure, type RequestFailure } from "../../s3/errors.js";
import type { SigningCredentials } from "../../s3/sigv4.js";
import { SLICE_BYTES } from "../range-slices.js";
import { portableSetup } from "./worker-start.js";
import type { DigestPiece, FromWorker, SharedBytes, TaskResult, TaskWork, ToWorker, WorkerSetup } from "./protocol.js";

/**
 * The data plane's worker threads, seen from the main thread (issue #37):
 * started as tasks need them (a command that never splits an object starts
 * none; see tasksPerWorker), each owning its own connections, TLS sessions and buffers
 * (worker-thread.ts). A task goes to the worker with the fewest in flight.
 *
 * A worker runs one attempt of a task; the retry loop, the retry pacer, the
 * memory budget, progress and the resume journal stay here, so every
 * decision is taken in one place whatever thread saw the event. A worker
 * that dies fails its tasks as a dropped connection does (retryable,
 * S3X_WORKER_EXIT) and is replaced; its half-written ranges are written again
 * by the retries (positional writes), and nothing is renamed into place
 * before every range is confirmed.
 */

/** What a worker costs beyond the memory budget: its V8 isolate and heap, its code and its connections (measured: see docs/workers.md). */
export const WORKER_MEMORY_BYTES = 24 * 1024 * 1024;
/** Per task in flight a worker holds two slices: the memory budget is charged this much (engine/download/worker-ranges.ts). */
export const WORKER_TASK_BYTES = 2 * SLICE_BYTES;

/**
 * With the default --workers, how much work a run must have before its
 * transfers go through workers: starting one costs ~40 ms of CPU (its
 * isolate and code) and each attempt a few messages, ~4 % of the CPU of
 * a 1 GiB download on one thread, ~20 % of a 128 MiB one (measured here,
 * plain HTTP, 5 interleaved runs: 1.10 against 1.05 CPU-s for 1 GiB, 0.29
 * against 0.24 for 128 MiB). Below this, one thread is cheaper.
 */
export const WORKER_WORTHWHILE_BYTES = 256 * 1024 * 1024;

/** How long an address another thread found bad is passed on to a worker that starts later (the bad list's cooldowns are seconds). */
const RECENTLY_BAD_MS = 60_000;

export interface WorkerPoolOptions {
  /** Worker threads to run at most (at least 1). */
  size: number;
  /**
   * Tasks one worker takes before another is started: workers start as the
   * work needs them (each costs ~40 ms of CPU to start and ~10 MiB), so a
   * transfer with few requests in flight on a machine of many cores starts
   * few. The run's concurrency divided by `size`, rounded up.
   */
  tasksPerWorker: number;
  settings: S3Settings;
  /** The run's credentials, from the main thread's provider chain; undefined when requests are anonymous. */
  credentials: () => Promise<SigningCredentials | undefined>;
  /** What the main thread's requester knows of a bucket (its region from a redirect), handed to the workers with each task. */
  bucketKnowledge: (bucket: string) => { settled: boolean; region?: string };
  /** What a worker's requester learnt of a bucket (an answer, a region from a redirect): the main thread's takes it too. */
  learnBucket: (bucket: string, known: { settled: boolean; region?: string }) => void;
  debug?: (line: string) => void;
  /** A worker's pools found an address bad: the main thread's pools follow (the pool tells the other workers itself). */
  onAddressBad?: (address: string, problem: string) => void;
  /**
   * The user asked for workers (--workers, $S3X_WORKERS): they carry every
   * multipart transfer and whole small objects of listed sets. Otherwise only
   * runs with WORKER_WORTHWHILE_BYTES of work, and no whole objects.
   */
  asked: boolean;
  /** Test hook ($S3X_TEST_WORKER_EXIT_AFTER_BYTES): the first worker (`every`: each) exits once it moved this many bytes. */
  exitHook?: { bytes: number; every: boolean };
}

/** One attempt of a request in a worker: what to do, where not to send it, and its cancellation. */
export interface WorkerAttempt<W extends TaskWork = TaskWork> {
  work: W;
  avoid: ReadonlySet<string>;
  signal: AbortSignal;
  /** More bytes landed (in the file or the buffer), in order, with their digests (when a plan asked for them). */
  onLanded?: (bytes: number, pieces: readonly DigestPiece[]) => void;
  /**
   * The retry loop's routing for this attempt, when its tail hedger follows
   * it: the pool keeps its `address` and `tracked` (a proxy of the worker's
   * straggler watch) up to date, as the transport does for its own requests.
   */
  hedgeRouting?: AttemptRouting;
}

interface Pending {
  onLanded?: (bytes: number, pieces: readonly DigestPiece[]) => void;
  hedgeRouting?: AttemptRouting;
  /** What the worker last said of the attempt's straggling. */
  worthy: boolean;
  resolve: (result: TaskResult) => void;
  reject: (err: Error) => void;
  release: () => void;
}

interface Slot {
  worker: Worker;
  index: number;
  pending: Map<number, Pending>;
  /** StatsRequests sent, by id: answered with [] if the worker exits first. */
  statsWaiters: Map<number, (stats: AddressStats[]) => void>;
  /** Why it stopped, when an uncaught error did it. */
  error?: Error;
}

export class WorkerPool {
  private readonly slots: (Slot | undefined)[];
  private nextTask = 1;
  private started = 0;
  private deaths = 0;
  private closing = false;
  private plannedBytes = 0;
  /** Buckets whose first attempt is out, not answered yet (run). */
  private readonly firstForBucket = new Map<string, Promise<void>>();
  /** Addresses put on a bad list lately, by when: a worker started later learns them (start). */
  private readonly recentlyBad = new Map<string, { problem: string; at: number }>();

  /** `script`: the worker's code (workerScript()). */
  constructor(
    private readonly options: WorkerPoolOptions,
    private readonly script: string,
  ) {
    if (!(options.size >= 1)) throw new RangeError(`a worker pool needs at least one worker, got ${options.size}`);
    this.slots = new Array<Slot | undefined>(options.size).fill(undefined);
  }

  get size(): number {
    return this.options.size;
  }

  /**
   * Whether the workers also carry whole objects (the one request of a small
   * object in a listed set): only when the user asked for workers. On this
   * 2-core machine 1,000 × 64 KiB cost 1.03–1.10 CPU-s through workers
   * against 0.89 on one thread for the same wall time; what they gain on many
   * cores is still to be measured (bench:cores' small workload).
   */
  get carriesWholeObjects(): boolean {
    return this.options.asked;
  }

  /** Whether a worker was started (it may have exited since). */
  get running(): boolean {
    return this.started > 0;
  }

  /** Counts bytes the run now knows it will move (progress totals): see worthUsing. */
  noteWork(bytes: number): void {
    this.plannedBytes += bytes;
  }

  /** Whether transfers should go through the workers now: they run already, or the run's work pays for starting them. */
  worthUsing(): boolean {
    return this.running || this.options.asked || this.plannedBytes >= WORKER_WORTHWHILE_BYTES;
  }

  /** How many workers were started in all (replacements of dead ones included). */
  get workersStarted(): number {
    return this.started;
  }

  /**
   * Runs one attempt in the least busy worker. It settles only once the
   * worker answered (or exited): a cancelled attempt first stops touching its
   * file or buffer, so they can be closed or reused as soon as it settles.
   */
  async run(attempt: WorkerAttempt): Promise<TaskResult> {
    const bucket = attempt.work.ref.bucket;
    if (this.options.bucketKnowledge(bucket).settled) return this.runNow(attempt);
    // No answer for this bucket yet (its region may be another): one attempt goes first, across
    // threads as within one (s3/region-redirects BucketRegions.inTurn), so a redirect is met once.
    const first = this.firstForBucket.get(bucket);
    if (first) {
      await first;
      return this.runNow(attempt);
    }
    const answered = this.runNow(attempt);
    const settled = answered.then(
      () => undefined,
      () => undefined,
    );
    this.firstForBucket.set(bucket, settled);
    void settled.then(() => this.firstForBucket.delete(bucket));
    return answered;
  }

  private async runNow(attempt: WorkerAttempt): Promise<TaskResult> {
    const { signal } = attempt;
    signal.throwIfAborted();
    if (this.closing) throw new Error("the worker threads are shut down");
    const credentials = await this.options.credentials();
    const slot = this.leastBusy();
    const id = this.nextTask++;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => this.send(slot, { type: "cancel", id });
      signal.addEventListener("abort", onAbort, { once: true });
      const release = (): void => {
        signal.removeEventListener("abort", onAbort);
        slot.pending.delete(id);
        keepAliveWhileAsked(slot);
      };
      slot.pending.set(id, { onLanded: attempt.onLanded, hedgeRouting: attempt.hedgeRouting, worthy: false, resolve, reject, release });
      keepAliveWhileAsked(slot);
      this.send(slot, {
        type: "task",
        id,
        work: attempt.work,
        avoid: [...attempt.avoid],
        credentials: credentials && { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey, sessionToken: credentials.sessionToken },
        watch: attempt.hedgeRouting !== undefined,
        bucket: this.options.bucketKnowledge(attempt.work.ref.bucket),
      });
    });
  }

  /**
   * An address went on a bad list (in the main thread's pools, or in worker
   * `from`'s): every other worker's pools follow, so no thread keeps sending
   * to an address another found dead.
   */
  addressBad(address: string, problem: string): void {
    this.tellOthers(address, problem, undefined);
  }

  private tellOthers(address: string, problem: string, from: Slot | undefined): void {
    this.recentlyBad.set(address, { problem, at: Date.now() });
    for (const slot of this.slots) if (slot && slot !== from) this.send(slot, { type: "address-bad", address, problem });
  }

  /** Every running worker's per-address counters (one list per worker). */
  async addressStats(): Promise<AddressStats[][]> {
    const running = this.slots.filter((slot): slot is Slot => slot !== undefined);
    return await Promise.all(
      running.map(
        (slot) =>
          new Promise<AddressStats[]>((resolve) => {
            const id = this.nextTask++;
            slot.statsWaiters.set(id, resolve);
            keepAliveWhileAsked(slot);
            this.send(slot, { type: "stats", id });
          }),
      ),
    );
  }

  /** Stops every worker; tasks still out fail. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((slot) => slot?.worker.terminate()));
  }

  private send(slot: Slot, message: ToWorker): void {
    slot.worker.postMessage(message);
  }

  /**
   * The running worker with the fewest tasks in flight, unless every running
   * one already has tasksPerWorker and a place is free: then a new one.
   */
  private leastBusy(): Slot {
    let best: Slot | undefined;
    let free = -1;
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i];
      if (!slot) free = free < 0 ? i : free;
      else if (!best || slot.pending.size < best.pending.size) best = slot;
    }
    if (best && (best.pending.size < this.options.tasksPerWorker || free < 0)) return best;
    const started = this.start(free);
    this.slots[free] = started;
    return started;
  }

  private start(index: number): Slot {
    const first = this.started === 0;
    this.started++;
    const setup: WorkerSetup = {
      ...portableSetup(this.options.settings),
      debug: this.options.debug !== undefined,
      index,
      exitAfterBytes: first || this.options.exitHook?.every ? this.options.exitHook?.bytes : undefined,
    };
    // Loaded here, not imported at the top: commands that start no worker do not load it.
    const { Worker } = process.getBuiltinModule("node:worker_threads");
    const worker = new Worker(this.script, { workerData: setup });
    const slot: Slot = { worker, index, pending: new Map(), statsWaiters: new Map() };
    worker.unref();
    worker.on("message", (message: FromWorker) => this.receive(slot, message));
    worker.on("error", (err) => (slot.error = err));
    worker.on("exit", (code) => this.exited(slot, code));
    // What the other threads found bad lately, this one avoids from its first request.
    for (const [address, { problem, at }] of this.recentlyBad) {
      if (Date.now() - at < RECENTLY_BAD_MS) this.send(slot, { type: "address-bad", address, problem });
    }
    this.options.debug?.(`worker thread ${index} started`);
    return slot;
  }

  private receive(slot: Slot, message: FromWorker): void {
    if (message.type === "debug") {
      this.options.debug?.(message.line);
      return;
    }
    if (message.type === "address-bad") {
      this.tellOthers(message.address, message.problem, slot);
      this.options.onAddressBad?.(message.address, message.problem);
      return;
    }
    if (message.type === "stats") {
      slot.statsWaiters.get(message.id)?.(message.stats);
      slot.statsWaiters.delete(message.id);
      keepAliveWhileAsked(slot);
      return;
    }
    const pending = slot.pending.get(message.id);
    if (!pending) return;
    if (message.type === "landed") {
      pending.onLanded?.(message.bytes, message.pieces);
      return;
    }
    if (message.type === "hedge-view") {
      this.viewed(slot, message.id, pending, message.address, message.worthy);
      return;
    }
    pending.release();
    if (message.bucket) this.options.learnBucket(message.bucket.name, message.bucket.known);
    if (message.result) pending.resolve(message.result);
    else pending.reject(new RelayedFailure(message.failure ?? { network: false, message: "the worker thread gave no reason" }));
  }

  /** The worker told where a watched attempt went and whether it straggles: the hedger reads it from the attempt's routing. */
  private viewed(slot: Slot, id: number, pending: Pending, address: string, worthy: boolean): void {
    const routing = pending.hedgeRouting;
    if (!routing) return;
    pending.worthy = worthy;
    routing.address = address;
    routing.tracked ??= {
      hedgeWorthy: () => pending.worthy,
      lostToHedge: () => this.send(slot, { type: "lost-to-hedge", id }),
      // Counted once the duplicate settled (its task is over by then): by address, in the worker that sent it.
      countAsHedge: (won) => this.send(slot, { type: "count-hedge", address, won }),
    };
  }

  /**
   * A worker ended. Its tasks fail as a dropped connection would (the retry
   * loop sends them again, to a replacement); a pool whose workers keep
   * dying stops replacing them, and its tasks then fail for good.
   */
  private exited(slot: Slot, code: number): void {
    if (this.slots[slot.index] === slot) this.slots[slot.index] = undefined;
    for (const answer of slot.statsWaiters.values()) answer([]);
    slot.statsWaiters.clear();
    if (this.closing) {
      for (const pending of [...slot.pending.values()]) {
        pending.release();
        pending.reject(new Error("the worker threads are shut down"));
      }
      return;
    }
    this.deaths++;
    const why = slot.error ? `: ${slot.error.message}` : "";
    this.options.debug?.(`worker thread ${slot.index} exited with code ${code}${why}`);
    const hopeless = this.deaths > 2 * this.options.size + 2;
    const failure: RequestFailure = {
      code: "S3X_WORKER_EXIT",
      network: !hopeless,
      message: `a worker thread exited (code ${code}${why})${hopeless ? "; worker threads keep exiting, so no more are started" : ""}`,
    };
    if (hopeless) this.closing = true;
    for (const pending of [...slot.pending.values()]) {
      pending.release();
      pending.reject(new RelayedFailure(failure));
    }
  }
}

/**
 * A worker keeps the process alive only while it owes an answer (a task's or
 * stats'): an idle one must not hold up the exit, and one being waited for
 * must, as nothing else may be left on the event loop meanwhile.
 */
function keepAliveWhileAsked(slot: Slot): void {
  if (slot.pending.size > 0 || slot.statsWaiters.size > 0) slot.worker.ref();
  else slot.worker.unref();
}

/** The run's worker pool if its transfers should go through it now (WorkerPool.worthUsing), else undefined. */
export function usableWorkers(pool: WorkerPool | undefined): WorkerPool | undefined {
  return pool?.worthUsing() ? pool : undefined;
}

/** The window of a part buffer a worker can see, or undefined when it is not in shared memory (engine/memory.ts). */
export function sharedBytes(buffer: Buffer): SharedBytes | undefined {
  if (!(buffer.buffer instanceof SharedArrayBuffer)) return undefined;
  return { memory: buffer.buffer, offset: buffer.byteOffset, length: buffer.length };
}
