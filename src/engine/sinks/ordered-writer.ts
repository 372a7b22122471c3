import type { DownloadSink } from "./download-sink.js";
import { FetchGate, ReadAhead, type WriterWatcher } from "./read-ahead.js";

/** A destination that takes bytes strictly in order, such as stdout. */
export interface ByteWriter {
  write(data: Buffer): Promise<void>;
  end(): Promise<void>;
}

interface Waiting {
  data: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Turns out-of-order part completions into an in-order byte stream. A part
 * that arrives early waits here, holding its buffer, until every part before
 * it has been written; `write` resolves only when its bytes have been handed
 * to the destination. Fetching runs at most `window` parts ahead of the
 * writer (waitForRoom; a ReadAhead grows it when the writer runs dry), and
 * the buffers come from the shared memory budget: a slow reader or one slow
 * part stalls the downloads instead of growing memory.
 */
export class OrderedWriter implements DownloadSink {
  private next = 0;
  private readonly waiting = new Map<number, Waiting>();
  private pumping = false;
  private failure: Error | undefined;
  private readonly readAhead: ReadAhead;
  private readonly gate: FetchGate;
  private readonly watcher: WriterWatcher;

  constructor(
    private readonly out: ByteWriter,
    window: number | ReadAhead = Number.POSITIVE_INFINITY,
    /** Told how fast the destination takes bytes and when the writer runs dry (by default: the window's ReadAhead). */
    watcher?: WriterWatcher,
  ) {
    this.readAhead = ReadAhead.of(window);
    this.gate = new FetchGate(this.readAhead);
    this.watcher = watcher ?? this.readAhead.watcher(() => this.gate.open(this.next));
  }

  waitForRoom(index: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return this.gate.wait(index, this.next);
  }

  private observer: ((data: Buffer) => void) | undefined;
  private sized: ((size: number) => void) | undefined;

  async open(size: number): Promise<void> {
    this.sized?.(size);
  }

  /** Hears the object's size once its first answer told it (before any byte is written). */
  onSize(listener: (size: number) => void): void {
    this.sized = listener;
  }

  /** Sees every byte once, in order (a running hash over a stream that cannot be read back). */
  observeInOrder(observer: (data: Buffer) => void): void {
    this.observer = observer;
  }

  write(index: number, _offset: number, data: Buffer): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.readAhead.arrived(index, data.length);
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(index, { data, resolve, reject });
      void this.pump();
    });
  }

  /** Parts written so far (for tests and progress). */
  get written(): number {
    return this.next;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    let wrote = false;
    try {
      let part: Waiting | undefined;
      while (!this.failure && (part = this.waiting.get(this.next)) !== undefined) {
        this.waiting.delete(this.next);
        try {
          if (part.data.length > 0) {
            this.observer?.(part.data);
            const started = performance.now();
            await this.out.write(part.data);
            this.watcher.wrote(part.data.length, performance.now() - started);
          }
          this.next++;
          wrote = true;
          part.resolve();
          this.gate.open(this.next);
        } catch (err) {
          this.fail(err as Error);
          part.reject(err as Error);
        }
      }
    } finally {
      this.pumping = false;
    }
    // Ran dry: the reader is about to wait for the network. (Not before the
    // first write: waiting for part 0 says nothing about the window.)
    if (wrote && !this.failure && !this.waiting.has(this.next)) this.watcher.ranDry();
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.gate.fail(err);
    for (const part of this.waiting.values()) part.reject(err);
    this.waiting.clear();
  }

  async commit(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.waiting.size > 0) throw new Error(`ordered writer committed with ${this.waiting.size} parts still waiting`);
    await this.out.end();
  }

  async discard(): Promise<void> {
    this.fail(new Error("download discarded"));
  }

  /** Fails every part waiting, and every write after, with `reason`. */
  stop(reason: Error): void {
    this.fail(reason);
  }
}
