import assert from "node:assert/strict";
import { OrderedWriter, type ByteWriter } from "../../../src/engine/sinks/ordered-writer.js";
import { ObjectStream } from "../../../src/engine/sinks/object-stream.js";
import { INITIAL_READ_AHEAD, ReadAhead } from "../../../src/engine/sinks/read-ahead.js";

/** A destination whose every write waits until the test releases it (a reader that takes its time). */
class HeldWriter implements ByteWriter {
  written: string[] = [];
  private held: (() => void)[] = [];
  private arrivals: (() => void)[] = [];
  write(data: Buffer): Promise<void> {
    return new Promise((resolve) => {
      this.held.push(() => {
        this.written.push(data.toString());
        resolve();
      });
      for (const arrived of this.arrivals.splice(0)) arrived();
    });
  }
  async end(): Promise<void> {}
  /** Resolves once a write is waiting to be released. */
  async waiting(): Promise<void> {
    if (this.held.length === 0) await new Promise<void>((resolve) => this.arrivals.push(resolve));
  }
  /** Lets the oldest held write finish. */
  releaseOne(): void {
    this.held.shift()!();
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("engine/sinks/read-ahead", () => {
  it("starts at two parts and doubles each time the writer runs dry, up to its maximum", () => {
    const readAhead = new ReadAhead(29);
    assert.equal(INITIAL_READ_AHEAD, 2);
    const seen = [readAhead.window];
    while (readAhead.starved()) seen.push(readAhead.window);
    assert.deepEqual(seen, [2, 4, 8, 16, 29]);
    assert.equal(readAhead.starved(), false, "at its maximum it stays");
    assert.equal(new ReadAhead(1).window, 1, "never above its maximum");
    const fixed = ReadAhead.fixed(5);
    assert.equal(fixed.starved(), false);
    assert.equal(fixed.window, 5);
  });

  it("grows to what keeps the reader fed (its rate × a part's fetch time, in parts, + 1), at least double", () => {
    const MiB = 1024 * 1024;
    let now = 0;
    const fast = new ReadAhead(29, 2, () => now);
    fast.granted(0);
    now = 100;
    fast.arrived(0, 8 * MiB); // a part takes 100 ms to arrive
    fast.wrote(8 * MiB, 5); // the reader takes a part in 5 ms
    assert.equal(fast.starved(), true);
    assert.equal(fast.window, 21, "100 ms of fetching is 20 parts of reading, + the one being written");
    assert.equal(fast.starved(), true);
    assert.equal(fast.window, 29, "then at least double, up to the maximum");

    now = 0;
    const slow = new ReadAhead(29, 2, () => now);
    slow.granted(0);
    now = 100;
    slow.arrived(0, 8 * MiB);
    slow.wrote(8 * MiB, 200); // a reader slower than the network: 2 parts would do
    slow.starved();
    assert.equal(slow.window, 4, "never less than double");
  });

  it("an ordered writer that runs dry fetches further ahead, and wakes the parts that now fit", async () => {
    const out = new HeldWriter();
    const readAhead = new ReadAhead(8);
    const writer = new OrderedWriter(out, readAhead);
    await writer.waitForRoom(1);
    let roomFor2 = false;
    const room2 = writer.waitForRoom(2).then(() => (roomFor2 = true));
    const write0 = writer.write(0, 0, Buffer.from("a"));
    await out.waiting();
    out.releaseOne();
    await write0;
    // Part 0 written, part 1 not there: the reader would wait, so the window doubles.
    await room2;
    assert.equal(roomFor2, true);
    assert.equal(readAhead.window, 4);
    await writer.waitForRoom(4); // next (1) + 4 > 4
    let roomFor5 = false;
    void writer.waitForRoom(5).then(() => (roomFor5 = true));
    await turn();
    assert.equal(roomFor5, false, "a window of 4 from part 1 ends before part 5");
  });

  it("a reader slower than the downloads never runs dry, so the window stays small", async () => {
    const out = new HeldWriter();
    const readAhead = new ReadAhead(8);
    const writer = new OrderedWriter(out, readAhead);
    const writes: Promise<void>[] = [];
    // Each next part arrives while the one before is still being written.
    writes.push(writer.write(0, 0, Buffer.from("0")));
    for (let part = 1; part < 6; part++) {
      await out.waiting();
      await writer.waitForRoom(part);
      writes.push(writer.write(part, 0, Buffer.from(String(part))));
      await turn();
      out.releaseOne();
      assert.equal(readAhead.window, 2, `after part ${part - 1}: the next part was always there`);
    }
    await out.waiting();
    out.releaseOne();
    await Promise.all(writes);
    assert.deepEqual(out.written, ["0", "1", "2", "3", "4", "5"]);
    assert.equal(readAhead.window, 4, "the last part leaves the writer dry (harmless: nothing is left to fetch)");
  });

  it("a stream of objects grows its window (in object parts) when its writer runs dry", async () => {
    const out = new HeldWriter();
    const readAhead = new ReadAhead(6);
    const stream = new ObjectStream(out, "raw", readAhead, (size) => size);
    const a = stream.next({ name: "a", shown: "s3://b/a", size: 2, mtimeMs: 0 });
    const b = stream.next({ name: "b", shown: "s3://b/b", size: 2, mtimeMs: 0 });
    await a.waitForRoom!(1);
    let roomForB = false;
    const roomB = b.waitForRoom!(0).then(() => (roomForB = true));
    await turn();
    assert.equal(roomForB, false, "b's first part is the third: outside a window of 2");
    const write0 = a.write(0, 0, Buffer.from("x"));
    await out.waiting();
    out.releaseOne();
    await write0;
    await roomB;
    assert.equal(readAhead.window, 4, "ran dry after a's first part");
    assert.equal(roomForB, true);
  });
});
