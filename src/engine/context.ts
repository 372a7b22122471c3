import type { S3Requester } from "../s3/request.js";
import PQueue from "p-queue";
import { childController } from "./child-controller.js";
import { TailHedger } from "./hedge.js";
import { ChecksumSupport } from "./integrity/checksum-support.js";
import { MemoryBudget } from "./memory.js";
import type { RetryHooks, RetryPolicy } from "./retry.js";
import type { RequestFailure } from "../s3/errors.js";
import type { WorkerPool } from "./workers/pool.js";

/** What the engine tells the outside world while it works (the CLI draws it). */
export interface ProgressListener {
  /** More bytes are now known to be part of the work. */
  addTotal(bytes: number): void;
  /** Bytes that have arrived (downloads) or been stored (uploads). */
  addDone(bytes: number): void;
}

/** Counters for --json stats and the summary line. */
export interface EngineStats {
  requests: number;
  retries: number;
  lastRetry?: RequestFailure;
  /** Object bytes that went over the network, each direction (a re-sent part counts again). */
  bytesSent: number;
  bytesReceived: number;
  /** Parts and bytes a resumed transfer found already done and verified, so did not transfer. */
  reusedParts: number;
  reusedBytes: number;
  /** Objects whose checksum (or MD5 ETag) was verified end to end. */
  verifiedObjects: number;
  /** Single-PUT uploads whose checksum the server did not echo, so did not check. */
  unconfirmedChecksums: number;
}

/**
 * Everything the transfers of one command share: the S3 request layer, one request
 * queue (the global concurrency limit), one memory budget, the retry policy,
 * the tail hedger and the cancellation signal. As in aws-c-s3, the client side owns
 * scheduling and memory; each object transfer only asks for slots and buffers.
 */
export interface TransferContext {
  s3: S3Requester;
  queue: PQueue;
  memory: MemoryBudget;
  retry: RetryPolicy;
  /** Judges when the transfer is at its tail and keeps the budget of hedged duplicates (engine/hedge.ts). */
  hedger: TailHedger;
  /** Whether the endpoint checks the additional checksums uploads send, once the first answer told. */
  checksumSupport: ChecksumSupport;
  signal: AbortSignal;
  progress: ProgressListener;
  stats: EngineStats;
  /** Tells the user something worth knowing that is not an error (an interrupted upload kept, a resume point found). */
  notify(message: string): void;
  /** A line for --debug (absent without it). */
  debug?: (line: string) => void;
  /** Keys per ListObjectsV2 page (--page-size); the server's maximum (1,000) when unset. */
  listPageSize?: number;
  /** The data-plane worker threads (--workers), when the run has any: ranged downloads to files go to them. */
  workers?: WorkerPool;
  /** Key ranges listed at once in a recursive listing (--list-ranges); engine/listing's default when unset. */
  listRanges?: number;
}

export interface ContextOptions {
  s3: S3Requester;
  concurrency: number;
  maxMemory: number;
  retry: RetryPolicy;
  signal: AbortSignal;
  progress?: ProgressListener;
  notify?: (message: string) => void;
  debug?: (line: string) => void;
  listPageSize?: number;
  listRanges?: number;
  workers?: WorkerPool;
}

export function createContext(options: ContextOptions): TransferContext {
  const queue = new PQueue({ concurrency: options.concurrency });
  return {
    s3: options.s3,
    queue,
    // With worker threads, part buffers are shared with them (engine/workers).
    memory: new MemoryBudget(options.maxMemory, options.workers !== undefined),
    retry: options.retry,
    hedger: new TailHedger(queue, options.retry.pacer),
    checksumSupport: new ChecksumSupport(),
    signal: options.signal,
    progress: workCounted(options.progress ?? { addTotal() {}, addDone() {} }, options.workers),
    stats: { requests: 0, retries: 0, bytesSent: 0, bytesReceived: 0, reusedParts: 0, reusedBytes: 0, verifiedObjects: 0, unconfirmedChecksums: 0 },
    notify: options.notify ?? (() => {}),
    debug: options.debug,
    listPageSize: options.listPageSize,
    listRanges: options.listRanges,
    workers: options.workers,
  };
}

/** Progress that also tells the worker pool how much work the run has (WorkerPool.worthUsing). */
function workCounted(progress: ProgressListener, workers: WorkerPool | undefined): ProgressListener {
  if (!workers) return progress;
  return {
    addTotal: (bytes) => {
      workers.noteWork(bytes);
      progress.addTotal(bytes);
    },
    addDone: (bytes) => progress.addDone(bytes),
  };
}

/**
 * The cancellation scope of one object transfer, made only when needed. An
 * object fetched in one request needs no signal of its own: the command's
 * will do, and most objects of a recursive download are that small. Once it
 * takes several requests (`split`), they share a child signal that one failed
 * request aborts for its siblings. A child controller costs an AbortSignal
 * and two listener updates, ~50 µs per object on our machines.
 */
export class ObjectScope {
  private child: { controller: AbortController; dispose: () => void } | undefined;

  constructor(private readonly parent: AbortSignal) {}

  /** What the object's requests listen on: the command's signal until split. */
  get signal(): AbortSignal {
    return this.child?.controller.signal ?? this.parent;
  }

  /** From now on the object's requests share a signal of their own. */
  split(): void {
    this.child ??= childController(this.parent);
  }

  /** Cancels the object's requests (never the command's). */
  abort(reason: unknown): void {
    this.split();
    this.child!.controller.abort(reason);
  }

  dispose(): void {
    this.child?.dispose();
  }
}

/**
 * Runs `task` in the command's request queue, once it has a free slot. A
 * task whose signal aborted while it waited rejects with the signal's reason
 * instead of starting. The signal is not given to p-queue: it would add two
 * abort listeners per task to the signal every request of the command
 * shares, and Node's EventTarget walks all of them on each add and remove.
 */
export function queued<T>(ctx: TransferContext, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
  return ctx.queue.add(async () => {
    signal.throwIfAborted();
    return await task();
  });
}

/**
 * Waits until the request queue has a free slot ahead, then for a part
 * buffer. Without the first wait a producer would fill the whole memory
 * budget with buffers for parts that are only queued, not in flight:
 * memory would then grow to --max-memory on every large transfer.
 */
export async function acquirePartBuffer(ctx: TransferContext, size: number, signal: AbortSignal): Promise<Buffer> {
  await waitForQueueRoom(ctx);
  return ctx.memory.acquire(size, signal);
}

/** Resolves when no task is waiting in the queue (all queued work is running). */
export function waitForQueueRoom(ctx: TransferContext): Promise<void> {
  return ctx.queue.onSizeLessThan(1);
}

/** Retry hooks that count retries in the command's stats, for `signal`. */
export function retryHooks(ctx: TransferContext, signal: AbortSignal = ctx.signal): RetryHooks {
  return {
    signal,
    onRetry: (failure) => {
      ctx.stats.retries++;
      ctx.stats.lastRetry = failure;
    },
  };
}
