import type { TransferContext } from "./context.js";

export type ObjectAction = "upload" | "download" | "copy" | "move" | "delete" | "mkdir";
export type ObjectStatus = "ok" | "failed" | "skipped" | "dryrun";

/** One object's outcome, for the per-object output lines and the summary. */
export interface ObjectResult {
  action: ObjectAction;
  source: string;
  destination: string;
  size: number;
  status: ObjectStatus;
  error?: unknown;
  /** Why a source file was skipped (not a file s3x can send: a named pipe, a dangling symlink), in aws-cli's words. */
  warning?: string;
}

export interface BatchSummary {
  transferred: number;
  deleted: number;
  skipped: number;
  failed: number;
  /** Of the skipped: source files left out with a warning (they set the exit status to 3). */
  warned: number;
  bytes: number;
}

/**
 * Runs many object transfers under the command's one queue and memory
 * budget. Objects are admitted as the listing or walk produces them, at most
 * `maxInFlight` at a time, so memory stays bounded however many keys there
 * are; one failed object is reported and the others go on.
 */
export class ObjectBatch {
  private inFlight = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private readonly running = new Set<Promise<void>>();
  readonly summary: BatchSummary = { transferred: 0, deleted: 0, skipped: 0, failed: 0, warned: 0, bytes: 0 };

  constructor(
    private readonly ctx: TransferContext,
    private readonly maxInFlight: number,
    private readonly onResult: (result: ObjectResult) => void,
  ) {}

  /** Records an object that needs no transfer (sync found it up to date, or a dry run). */
  record(result: ObjectResult): void {
    if (result.status === "skipped" || result.status === "dryrun") {
      this.summary.skipped++;
      if (result.warning !== undefined) this.summary.warned++;
    }
    else if (result.status === "failed") this.summary.failed++;
    else if (result.action === "delete") this.summary.deleted++;
    else {
      this.summary.transferred++;
      this.summary.bytes += result.size;
    }
    this.onResult(result);
  }

  /** Waits for a free object slot, then starts `run` in the background. */
  async submit(result: Omit<ObjectResult, "status" | "error">, run: () => Promise<number | void>): Promise<void> {
    while (this.inFlight >= this.maxInFlight) await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    if (this.ctx.signal.aborted) return;
    this.inFlight++;
    const task = run().then(
      (size) => this.record({ ...result, size: typeof size === "number" ? size : result.size, status: "ok" }),
      (error: unknown) => this.record({ ...result, status: "failed", error }),
    );
    const tracked = task.finally(() => {
      this.inFlight--;
      this.running.delete(tracked);
      this.slotWaiters.shift()?.();
    });
    this.running.add(tracked);
  }

  /** Waits for every submitted object. */
  async finish(): Promise<BatchSummary> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    return this.summary;
  }
}
