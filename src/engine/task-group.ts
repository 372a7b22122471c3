/**
 * The part requests of one object transfer: when one fails for good, the
 * others are cancelled (through the shared controller) and the first error
 * is the one reported, not the cancellations it caused.
 */
export class TaskGroup {
  private readonly running = new Set<Promise<unknown>>();
  private error: unknown;
  private hasFailed = false;

  /** `controller`: an AbortController, or anything that aborts the tasks' signal likewise (engine/context ObjectScope). */
  constructor(private readonly controller: { abort(reason: unknown): void; readonly signal: AbortSignal }) {}

  get failed(): boolean {
    return this.hasFailed || this.controller.signal.aborted;
  }

  get firstError(): unknown {
    return this.error;
  }

  add(task: Promise<unknown>): void {
    const tracked = task.then(
      () => undefined,
      (err: unknown) => {
        if (!this.hasFailed) {
          this.hasFailed = true;
          this.error = err;
          this.controller.abort(err);
        }
      },
    );
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  /** Waits for every task; throws the first failure. */
  async wait(): Promise<void> {
    await this.settle();
    if (this.hasFailed) throw this.error;
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /** Waits for every task, whatever happened. */
  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
