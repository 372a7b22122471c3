import type { SingleBar } from "cli-progress";
import type { ProgressListener } from "../engine/context.js";
import { formatSize } from "../plan/parts.js";

/**
 * The progress bar: drawn on stderr, only when stderr is a terminal and the
 * user did not ask for quiet. The engine calls addDone for every socket
 * chunk, so the bar is redrawn on a timer, never per call.
 */
export class ProgressDisplay implements ProgressListener {
  private total = 0;
  private done = 0;
  private objectsTotal = 0;
  private objectsDone = 0;
  private readonly started = Date.now();
  private bar: SingleBar | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(enabled: boolean) {
    if (!enabled) return;
    // Loaded only to draw a bar: cli-progress brings node:readline, a few
    // milliseconds of every start-up that a script or a pipe never uses.
    void import("cli-progress").then(({ default: cliProgress }) => {
      if (this.stopped) return;
      this.bar = new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: "{bar} {percentage}% | {doneText} / {totalText}{objectsText} | {rateText} | ETA {eta_formatted}",
          hideCursor: true,
          clearOnComplete: true,
          barsize: 30,
          etaBuffer: 50,
          fps: 5,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(1, 0, this.payload());
      this.timer = setInterval(() => this.redraw(), 200);
      this.timer.unref();
    });
  }

  addTotal(bytes: number): void {
    this.total += bytes;
  }

  addDone(bytes: number): void {
    this.done += bytes;
  }

  /** More objects found by a listing or walk (the total grows while listing). */
  addObjects(count: number): void {
    this.objectsTotal += count;
  }

  objectDone(): void {
    this.objectsDone++;
  }

  get bytesDone(): number {
    return this.done;
  }

  get seconds(): number {
    return (Date.now() - this.started) / 1000;
  }

  private payload(): Record<string, string> {
    const seconds = Math.max(this.seconds, 0.001);
    const objectsText = this.objectsTotal > 0 ? ` | ${this.objectsDone}/${this.objectsTotal} objects` : "";
    return { doneText: formatSize(this.done), totalText: formatSize(this.total), objectsText, rateText: `${formatRate(this.done / seconds)}` };
  }

  private redraw(): void {
    // Bytes can arrive before the first response reveals the total: wait for it.
    if (!this.bar || this.total === 0) return;
    this.bar.setTotal(Math.max(this.total, 1));
    this.bar.update(Math.min(this.done, Math.max(this.total, 1)), this.payload());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.bar) {
      this.redraw();
      this.bar.stop();
      this.bar = undefined;
    }
  }
}

export function formatRate(bytesPerSecond: number): string {
  return `${(bytesPerSecond / 1e6).toFixed(1)} MB/s`;
}

/** "copied 1.0 GiB in 3.10 s (346.4 MB/s)" */
export function summaryLine(verb: string, bytes: number, seconds: number): string {
  return `${verb} ${formatSize(bytes)} in ${seconds.toFixed(2)} s (${formatRate(bytes / Math.max(seconds, 0.001))})`;
}

/**
 * What a command prints on stdout. When the reader goes away (`| head`), the
 * next write fails with EPIPE: `onBroken` then cancels the run as Ctrl-C
 * would (cp and sync clean up what they started), and s3x ends quietly with
 * 141. `write` resolves once Node has handed the text to the pipe, so a
 * caller that awaits it (ls, page by page) stays at most a page ahead of a
 * slow reader instead of buffering the whole listing.
 */
export class StdoutLines {
  private failure: Error | undefined;
  private listening = false;

  constructor(private readonly onBroken: (err: Error) => void) {}

  write(text: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (!this.listening) {
      this.listening = true;
      // A failed write is emitted as 'error' as well, a tick after its
      // callback: with no listener that second report would crash s3x.
      process.stdout.on("error", (err: Error) => this.fail(err));
    }
    return new Promise<void>((resolve, reject) => {
      process.stdout.write(text, (err) => {
        if (!err) return resolve();
        this.fail(err);
        reject(err);
      });
    });
  }

  /** Writes without waiting: a failure still cancels the run through onBroken. */
  print(text: string): void {
    this.write(text).catch(() => undefined);
  }

  /**
   * Resolves once everything written so far has been taken by the OS or has
   * failed. Writes to a pipe complete later, in the event loop: a command
   * that printed its lines and decided its exit status at once would exit 0
   * although its reader had gone (`rm -r --dryrun … | head -1`). After this,
   * such a failure has cancelled the run through onBroken.
   */
  settled(): Promise<void> {
    if (this.failure || !this.listening) return Promise.resolve();
    // An empty write completes after every earlier one, and fails if they did.
    return this.write("").catch(() => undefined);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.onBroken(err);
  }
}
