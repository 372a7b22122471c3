import type { DownloadSink, ObjectIdentity } from "./download-sink.js";
import { OrderedWriter, type ByteWriter } from "./ordered-writer.js";
import { FetchGate, ReadAhead } from "./read-ahead.js";
import { tarEnd, tarEntryHeader, tarFailureMark, tarPaddingLength } from "./tar-header.js";

/**
 * Many objects as one byte stream (`s3x cat s3://bucket/prefix/`, `cp -r
 * … -`): each object's bytes, one object after another in the order they
 * were handed out, raw or framed as tar entries.
 *
 * Every piece of the stream (a tar header, each part of each object, a
 * padding block) gets one index in a single sequence, and one OrderedWriter
 * writes that sequence in order. So the next objects download while the
 * current one is written, but never more than `window` parts ahead of the
 * reader (a ReadAhead: small while the reader is slower than the network,
 * grown when it runs dry): the window (not the number of objects) bounds
 * memory, a slow reader slows the downloads, and the memory budget never fills with parts
 * of later objects while an earlier one waits for a buffer. Framing pieces
 * (a few hundred bytes, allocated here) do not count against the window.
 *
 * The pieces an object takes are counted from its listed size before it is
 * fetched (downloadPartCount); an object whose size changed since it was
 * listed stops the stream (its bytes would not fit what was announced).
 *
 * A tar entry's header is written once its object's first GET answered
 * (the sink's open), not when the object is handed out: an object that is
 * missing or forbidden then stops the stream at an entry boundary, where
 * failed() can end it with a mark every tar reader rejects
 * (tarFailureMark) rather than leave what reads as a complete archive.
 */

export type StreamFraming = "raw" | "tar";

/** What the objects after a failed one fail with: the stream cannot go on past a missing object. */
export class StreamStoppedError extends Error {}

/** How far a stopped stream got: objects written whole, and whether part of the next one was written too. */
export interface StreamProgress {
  wholeObjects: number;
  partial: boolean;
  /** The first object (in stream order) that failed, if one did. */
  stoppedAt?: string;
}

/** What the stream knows of an object before fetching it. */
export interface StreamedObject {
  /** The name a tar entry gets (the key). */
  name: string;
  /** Where it comes from, for messages (s3://bucket/key). */
  shown: string;
  size: number;
  mtimeMs: number;
}

export class ObjectStream {
  private readonly ordered: OrderedWriter;
  /** The index the next piece of the stream gets. */
  private nextIndex = 0;
  /** The number the next object part gets (parts only: what the window counts). */
  private nextPart = 0;
  /** Object parts written so far (they are written in order). */
  private partsWritten = 0;
  private failure: Error | undefined;
  /** Writes of framing pieces (headers, padding) still under way. */
  private readonly framing: Promise<void>[] = [];
  private readonly readAhead: ReadAhead;
  private readonly gate: FetchGate;
  /** Objects written whole so far, counted as the writer passes their last piece. */
  private wholeObjects = 0;
  /** The pieces [start, end) of each object not yet counted whole, in stream order. */
  private readonly unfinished: { start: number; end: number }[] = [];
  /**
   * After an object failed: the index it starts at, where the stream ends.
   * The objects before it are still written (the reader gets each whole),
   * those after it fail at once; the stream stops once the writer got there.
   */
  private stopAt: { index: number; reason: Error; shown: string } | undefined;
  private readonly drained: { promise: Promise<void>; resolve: () => void };

  constructor(
    private readonly out: ByteWriter,
    private readonly format: StreamFraming,
    /** How many object parts the downloads may run ahead of the writer (a number: always that many). */
    window: number | ReadAhead,
    /** How many parts a download of `size` bytes lands (engine/download.ts decides). */
    private readonly partsOf: (size: number) => number,
  ) {
    let resolve = (): void => undefined;
    this.drained = { promise: new Promise<void>((r) => (resolve = r)), resolve };
    this.readAhead = ReadAhead.of(window);
    this.gate = new FetchGate(this.readAhead);
    // The writer's own window is unbounded: this stream counts object parts (framing pieces are free).
    this.ordered = new OrderedWriter(out, Number.POSITIVE_INFINITY, this.readAhead.watcher(() => this.gate.open(this.partsWritten)));
  }

  /**
   * The sink for the next object of the stream. Objects appear in the order
   * this is called, whatever order their downloads finish in.
   */
  next(object: StreamedObject): DownloadSink {
    const tar = this.format === "tar";
    const parts = this.partsOf(object.size);
    this.countWritten();
    const start = this.nextIndex;
    const header = tar ? { index: this.nextIndex++, data: tarEntryHeader(object) } : undefined;
    const sink = new StreamedObjectSink(this, object, this.nextIndex, this.nextPart, parts, header);
    this.nextIndex += parts;
    this.nextPart += parts;
    if (tar) {
      const padding = tarPaddingLength(object.size);
      this.writeFraming(this.nextIndex++, Buffer.alloc(padding));
    }
    this.unfinished.push({ start, end: this.nextIndex });
    return sink;
  }

  /** How far the writer got (final once the stream stopped and every transfer settled). */
  progress(): StreamProgress {
    this.countWritten();
    const next = this.unfinished[0];
    return { wholeObjects: this.wholeObjects, partial: next !== undefined && this.ordered.written > next.start, stoppedAt: this.stopAt?.shown };
  }

  /**
   * After a failure, once every transfer settled: a tar stream stopped at an
   * entry boundary gets the failure mark, so no reader takes it for a whole
   * archive. Inside an entry nothing is added: the entry is cut short, which
   * every reader of its bytes reports. Raw bytes have no framing to mark.
   * Written past the stopped ordered writer, straight to the destination
   * (which may be gone: a reader that left needs no mark).
   */
  async failed(reason: string): Promise<void> {
    // Every object settled: the framing pieces before the place the stream ends at can all be written now.
    await Promise.all(this.framing);
    this.fail(new StreamStoppedError(`the stream stopped: ${reason}`));
    if (this.format !== "tar" || this.progress().partial) return;
    await this.out.write(tarFailureMark(reason)).catch(() => undefined);
  }

  private countWritten(): void {
    const written = this.ordered.written;
    while (this.unfinished.length > 0 && this.unfinished[0]!.end <= written) {
      this.unfinished.shift();
      this.wholeObjects++;
    }
  }

  /** After the last object: the end of a tar archive, then every byte handed to the destination. */
  async finish(): Promise<void> {
    if (this.format === "tar") this.writeFraming(this.nextIndex++, tarEnd());
    await Promise.all(this.framing);
    await this.ordered.commit();
  }

  /**
   * Ends the stream where a failed object starts (`index`), once the objects
   * before it are written; objects after it fail with `reason`. The earliest
   * failed object wins. Without an index: at the next object's place (an
   * object refused before it was handed out: a manifest's missing entry).
   */
  failFrom(shown: string, reason: Error, index = this.nextIndex): void {
    if (this.failure) return;
    if (this.stopAt === undefined || index < this.stopAt.index) this.stopAt = { index, reason, shown };
    this.stopIfThere();
  }

  /** Resolves once the stream stopped (after failFrom: once the objects before the failed one are written). */
  stopped(): Promise<void> {
    return this.drained.promise;
  }

  /** Stops the stream now: every object still waiting to be written fails with `reason` (an interruption). */
  fail(reason: Error): void {
    this.drained.resolve();
    this.failure ??= reason;
    this.ordered.stop(reason);
    this.gate.fail(reason);
  }

  /** Resolves once object part number `part` may be fetched: fewer than `window` parts ahead of the writer. */
  waitForRoom(part: number, index: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.stopAt && index >= this.stopAt.index) return Promise.reject(this.stopAt.reason);
    return this.gate.wait(part, this.partsWritten);
  }

  /** Writes piece `index`, object part number `part`; resolves once its bytes are handed to the destination. */
  async writePart(index: number, part: number, data: Buffer): Promise<void> {
    if (this.stopAt && index >= this.stopAt.index) throw this.stopAt.reason;
    this.readAhead.arrived(part, data.length);
    try {
      await this.ordered.write(index, 0, data);
    } catch (err) {
      // The destination failed (EPIPE: the reader went away): the parts waiting
      // for room must fail too, or their downloads would wait for good.
      this.fail(err as Error);
      throw err;
    }
    this.partsWritten++;
    this.gate.open(this.partsWritten);
    this.stopIfThere();
  }

  /** An entry's header, once its object answered; refused at or past a failed object's place (this object comes after it). */
  writeHeader(index: number, data: Buffer): void {
    if (this.stopAt && index >= this.stopAt.index) throw this.stopAt.reason;
    this.writeFraming(index, data);
  }

  /** Once the writer reached the failed object's place, the stream stops there. */
  private stopIfThere(): void {
    if (this.stopAt && this.ordered.written >= this.stopAt.index) this.fail(this.stopAt.reason);
  }

  /** Writes a framing piece (a tar header once its object answered, a padding block). */
  writeFraming(index: number, data: Buffer): void {
    // Nothing at or past a failed object's place: the stream ends there.
    if (this.stopAt && index >= this.stopAt.index) return;
    // A failed stream rejects these too; the object that failed reports why.
    this.framing.push(this.ordered.write(index, 0, data).then(() => this.stopIfThere(), () => undefined));
  }
}

/** One object's place in the stream: its parts' indices and numbers are offset to where the object starts. */
class StreamedObjectSink implements DownloadSink {
  constructor(
    private readonly stream: ObjectStream,
    private readonly object: StreamedObject,
    private readonly firstIndex: number,
    private readonly firstPart: number,
    private readonly parts: number,
    /** The tar header, written once the object answered. */
    private readonly header: { index: number; data: Buffer } | undefined,
  ) {}

  async open(size: number, _identity: ObjectIdentity): Promise<void> {
    if (size !== this.object.size) {
      throw new Error(`${this.object.shown} is ${size} bytes now but was listed with ${this.object.size}: it changed while the stream was written`);
    }
    if (this.header) this.stream.writeHeader(this.header.index, this.header.data);
  }

  waitForRoom(index: number): Promise<void> {
    this.check(index);
    return this.stream.waitForRoom(this.firstPart + index, this.firstIndex + index);
  }

  write(index: number, _offset: number, data: Buffer): Promise<void> {
    this.check(index);
    return this.stream.writePart(this.firstIndex + index, this.firstPart + index, data);
  }

  async commit(): Promise<void> {}

  /**
   * The stream cannot skip an object: one that fails ends it where it starts
   * (after the objects before it); an interrupted run (Ctrl-C, a reader gone) stops it now.
   */
  async discard(interrupted?: boolean): Promise<void> {
    const reason = new StreamStoppedError(`the stream stopped at ${this.object.shown}`);
    if (interrupted) this.stream.fail(reason);
    else this.stream.failFrom(this.object.shown, reason, this.firstIndex - (this.header ? 1 : 0));
  }

  private check(index: number): void {
    if (index >= this.parts) throw new Error(`${this.object.shown}: part ${index} of an object listed as ${this.parts} parts`);
  }
}
