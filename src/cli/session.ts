import { defaultMaxListeners, setMaxListeners } from "node:events";
import { connect, type AddressStats, type RequestSettings, type S3Connection } from "../engine/connection.js";
import { createContext, type TransferContext } from "../engine/context.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../engine/retry.js";
import { RetryPacer } from "../engine/pacer.js";
import { mergeAddressStats } from "../engine/workers/address-stats.js";
import { WorkerPool } from "../engine/workers/pool.js";
import { workerScript } from "../engine/workers/worker-start.js";
import { InterruptError } from "./errors.js";
import { StdoutLines } from "./output.js";
import { ProgressDisplay } from "./progress.js";
import { ResultPrinter } from "./results.js";
import type { RunOptions } from "./resolve-options.js";

/** Abort listeners on the command's signal per connection allowed before Node warns of a leak. */
const LISTENERS_PER_CONNECTION = 8;

export interface SessionOptions {
  /** Whether the command may draw a progress line (on a terminal, not with --quiet). */
  progressAllowed: boolean;
  /** JSON lines on stderr: stdout carries an object's bytes (`cp s3://b/k -`). */
  jsonToStderr?: boolean;
  /** Headers every request of the run carries (--request-payer, --sse-c keys). */
  requests?: RequestSettings;
}

/**
 * What one command run holds: the S3 connection, the shared transfer
 * context, the progress display and the Ctrl-C handling. A first SIGINT or
 * SIGTERM cancels the transfers (which keep what --resume can continue and
 * clean up the rest); a second one exits at once.
 */
export class Session {
  readonly connection: S3Connection;
  /** The data-plane worker threads (--workers), when there are to be any. */
  private readonly workers: WorkerPool | undefined;
  readonly context: TransferContext;
  readonly progress: ProgressDisplay;
  /** Per-object lines and summaries, on the right stream for --json, --quiet, --only-show-errors. */
  readonly printer: ResultPrinter;
  /** The command's stdout; a reader gone away cancels the run (see StdoutLines). */
  readonly stdout = new StdoutLines((err) => this.controller.abort(err));
  private readonly retry: RetryPolicy;
  private readonly controller = new AbortController();
  private readonly onSignal = (name: NodeJS.Signals): void => {
    if (this.controller.signal.aborted) {
      this.progress.stop();
      process.exit(name === "SIGINT" ? 130 : 143);
    }
    this.controller.abort(new InterruptError(name === "SIGINT" ? "SIGINT" : "SIGTERM"));
  };

  private debugTimer: NodeJS.Timeout | undefined;
  /** The endpoint's identity for local resume records ("aws" for AWS S3). */
  readonly endpoint: string;
  /** The S3 endpoint URL the run talks to; undefined for AWS's own. */
  readonly endpointUrl: string | undefined;

  /** Opens the session of a run whose options are resolved (cli/resolve-options). */
  static open(run: RunOptions, options: SessionOptions): Session {
    return new Session(run, options);
  }

  private constructor(readonly options: RunOptions, sessionOptions: SessionOptions) {
    const { concurrency, maxMemory, listPageSize, listRanges, aws: config } = options;
    // One pacer per run, shared by all its requests (one endpoint per run).
    const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: options.maxAttempts, pacer: new RetryPacer() };
    this.retry = retry;
    const mode = options.output.mode;
    const showBar = sessionOptions.progressAllowed && options.output.progress && (mode === "normal" || mode === "json") && process.stderr.isTTY === true;
    this.progress = new ProgressDisplay(showBar);
    const debug = options.output.debug ? (line: string) => this.progress.interrupt(() => process.stderr.write(`s3x: debug: ${line}\n`)) : undefined;
    // One view of address health: what this thread's pools find bad, the worker threads' pools avoid too (and back).
    const onAddressBad = (address: string, problem: string): void => this.workers?.addressBad(address, problem);
    const settings = { ...options.connection, net: { ...options.connection.net, debug, onAddressBad }, requests: sessionOptions.requests };
    for (const line of options.sources.debugLines) debug?.(line);
    debug?.(`region ${config.region} (${config.regionSource}), endpoint ${config.endpointUrl ? `${config.endpointUrl} (${config.endpointSource})` : "AWS"}${config.profile ? `, profile ${config.profile}` : ""}`);
    const tls = settings.net.tls;
    if (debug && tls) debug(tls.sessions?.describe() ?? `TLS sessions not kept (${tls.verify ? "S3X_TLS_SESSION_CACHE=off" : "--no-verify-ssl"})`);
    this.endpointUrl = settings.endpointUrl;
    this.endpoint = settings.endpointUrl ?? "aws";
    this.connection = connect(settings);
    if (debug) {
      // Once a second while the command runs: what every address is doing.
      this.debugTimer = setInterval(() => void this.printAddressStats(debug), 1_000);
      this.debugTimer.unref();
    }
    this.printer = new ResultPrinter(this, mode, sessionOptions.jsonToStderr === true);
    // Worker threads start at the first ranged download to a file, not here: most commands never need them.
    const s3 = this.connection.s3;
    const script = options.workers > 0 ? workerScript() : undefined;
    // An install without the worker's code (dist/s3x-worker.cjs) still works, on one thread.
    if (options.workers > 0 && !script) debug?.("no worker thread code beside the program: everything runs on the main thread");
    this.workers = script
      ? new WorkerPool({ size: options.workers, tasksPerWorker: Math.ceil(concurrency / options.workers), asked: options.workersAsked, settings, credentials: () => s3.signingCredentials(), bucketKnowledge: (bucket) => s3.regions.knowledgeOf(bucket), learnBucket: (bucket, known) => s3.regions.adopt(bucket, known), debug, onAddressBad: (address, problem) => void this.connection.markAddressBad(address, problem), exitHook: workerExitHook(process.env.S3X_TEST_WORKER_EXIT_AFTER_BYTES) }, script)
      : undefined;
    this.context = createContext({ s3, concurrency, maxMemory, retry, signal: this.controller.signal, progress: this.progress, listPageSize, listRanges, debug, workers: this.workers,
      notify: (message) => {
        if (mode !== "quiet") this.progress.interrupt(() => process.stderr.write(`s3x: ${message}\n`));
      },
    });
    // Each request in flight, each object it belongs to and each part waiting
    // for memory listens on the command's signal, and stops when done: a few
    // per connection is normal. A finite bound keeps Node's warning for a leak.
    setMaxListeners(Math.max(defaultMaxListeners, LISTENERS_PER_CONNECTION * concurrency), this.controller.signal);
    process.on("SIGINT", this.onSignal);
    process.on("SIGTERM", this.onSignal);
  }

  private async printAddressStats(debug: (line: string) => void): Promise<void> {
    for (const a of await this.addressStats()) {
      const problem = a.lastProblem ? ` (${a.lastProblem})` : "";
      debug(
        `${a.address} ${a.state}${problem}: ${a.requests} requests, ${a.inFlight} in flight, ${a.errors} errors, ${a.stragglers} stragglers, ` +
          `${(a.bytesIn / 1e6).toFixed(1)} MB in, ${(a.bytesOut / 1e6).toFixed(1)} MB out, ${(a.rateBytesPerSec / 1e6).toFixed(1)} MB/s`,
      );
    }
  }

  /** What every front-end address did, in this thread's pools and the worker threads' together (--json, --debug). */
  async addressStats(): Promise<AddressStats[]> {
    const own = await this.connection.addressStats();
    if (!this.workers) return own;
    return mergeAddressStats([own, ...(await this.workers.addressStats())]);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Before a command decides its exit status: waits until its printed lines
   * have reached stdout or failed (StdoutLines.settled), then throws the
   * reason the run was stopped for (Ctrl-C, a reader gone away, stop()).
   */
  async throwIfStopped(): Promise<void> {
    await this.stdout.settled();
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /** Cancels every transfer of the command; the command then ends with `reason`. */
  stop(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  async close(): Promise<void> {
    this.progress.stop();
    if (this.debugTimer) {
      clearInterval(this.debugTimer);
      const debug = (line: string) => process.stderr.write(`s3x: debug: ${line}\n`);
      await this.printAddressStats(debug);
      const pacing = this.retry.pacer?.stats();
      if (pacing) debug(`retry pacing: ${pacing.throttles} throttled, limit ${pacing.limit ?? "none"}, ${pacing.tokens} tokens, ${pacing.refusedRetries} retries refused`);
    }
    process.off("SIGINT", this.onSignal);
    process.off("SIGTERM", this.onSignal);
    await this.workers?.close();
    await this.connection.close();
  }
}

/**
 * The test hook $S3X_TEST_WORKER_EXIT_AFTER_BYTES: "N" makes the first worker
 * thread exit once it moved N bytes, "N:all" every worker (so the pool gives up).
 */
function workerExitHook(text: string | undefined): { bytes: number; every: boolean } | undefined {
  const match = text ? /^(\d+)(:all)?$/.exec(text) : null;
  return match ? { bytes: Number(match[1]), every: match[2] !== undefined } : undefined;
}
