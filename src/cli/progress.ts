import type { ProgressListener } from "../engine/context.js";
import { formatSize } from "../plan/parts.js";
import { formatRate } from "./output.js";

/** Erases the line the cursor is on: back to its start, then clear to its end. */
const CLEAR_LINE = "\r\x1b[K";
const REDRAW_MS = 200;
const BAR_WIDTH = 20;

/**
 * The progress line: drawn on stderr, only when stderr is a terminal and the
 * user asked for no quiet output. It owns one line, the one the cursor is on:
 * every draw starts with "\r", erases to the end of the line and is cut to
 * the terminal's width, so it never wraps and never moves the cursor to
 * another line. Anything else printed while it is shown goes through
 * `interrupt`, which erases it first; the next tick draws it again below.
 * `stop` (and the process's exit, whatever the cause) erases it, leaving the
 * cursor at the start of an empty line.
 *
 * Hand-written rather than cli-progress: that library saves and restores
 * the cursor position (ESC 7 / ESC 8) and turns line wrapping off (ESC[?7l)
 * while it draws, so output printed in between is overwritten or cut, and
 * its bar always shows a total, a percentage and an ETA, which a stream of
 * unknown length (stdin) does not have.
 *
 * The engine calls addDone for every socket chunk, so the line is redrawn
 * on a timer, never per call.
 */
export class ProgressDisplay implements ProgressListener {
  private total = 0;
  private done = 0;
  private objectsTotal = 0;
  private objectsDone = 0;
  private totalKnown = true;
  private readonly started = Date.now();
  private timer: NodeJS.Timeout | undefined;
  /** Whether the line currently holds a drawing (then it must be erased before other output). */
  private drawn = false;
  private readonly onExit = (): void => this.erase();

  constructor(private readonly enabled: boolean) {
    if (!enabled) return;
    this.timer = setInterval(() => this.draw(), REDRAW_MS);
    this.timer.unref();
    // A second Ctrl-C or an uncaught failure ends the process without stop(): still erase the line.
    process.once("exit", this.onExit);
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

  /** The size is not known before the end (an upload from stdin): show bytes and rate only. */
  totalUnknown(): void {
    this.totalKnown = false;
  }

  get bytesDone(): number {
    return this.done;
  }

  get seconds(): number {
    return (Date.now() - this.started) / 1000;
  }

  /** Prints something else: the progress line is erased first and drawn again at the next tick. */
  interrupt(print: () => void): void {
    this.erase();
    print();
  }

  /** The text of the progress line, without terminal controls. */
  line(): string {
    const seconds = Math.max(this.seconds, 0.001);
    const rate = formatRate(this.done / seconds);
    const objects = this.objectsTotal > 0 ? ` | ${this.objectsDone}/${this.objectsTotal} objects` : "";
    if (!this.totalKnown) return `${formatSize(this.done)}${objects} | ${rate}`;
    const total = Math.max(this.total, 1);
    const fraction = Math.min(this.done / total, 1);
    const filled = Math.round(fraction * BAR_WIDTH);
    const eta = this.done > 0 ? Math.ceil(((total - this.done) / this.done) * seconds) : undefined;
    return (
      `${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)} ${Math.floor(fraction * 100)}% | ` +
      `${formatSize(this.done)} / ${formatSize(this.total)}${objects} | ${rate}${eta === undefined ? "" : ` | ETA ${eta}s`}`
    );
  }

  private draw(): void {
    // Bytes can arrive before the first response reveals the total: wait for it.
    if (this.totalKnown && this.total === 0) return;
    // One column short of the width: writing the last column would move some terminals to the next line.
    const width = Math.max((process.stderr.columns ?? 80) - 1, 10);
    process.stderr.write(CLEAR_LINE + [...this.line()].slice(0, width).join(""));
    this.drawn = true;
  }

  private erase(): void {
    if (!this.drawn) return;
    process.stderr.write(CLEAR_LINE);
    this.drawn = false;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.erase();
    if (this.enabled) process.off("exit", this.onExit);
  }
}
