import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { OrderedWriter, type ByteWriter } from "../../../src/engine/sinks/ordered-writer.js";

class Recorder implements ByteWriter {
  chunks: Buffer[] = [];
  delayMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  failWith: Error | undefined;
  async write(data: Buffer): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    if (this.delayMs) await sleep(this.delayMs);
    this.inFlight--;
    if (this.failWith) throw this.failWith;
    this.chunks.push(Buffer.from(data));
  }
  async end(): Promise<void> {}
}

describe("engine/sinks/ordered-writer", () => {
  it("writes parts in order whatever order they complete in", async () => {
    const out = new Recorder();
    const writer = new OrderedWriter(out);
    const order = [3, 0, 4, 1, 2];
    await Promise.all(order.map((i) => writer.write(i, 0, Buffer.from([i]))));
    await writer.commit();
    assert.deepEqual(Buffer.concat(out.chunks), Buffer.from([0, 1, 2, 3, 4]));
  });

  it("holds a later part until the earlier ones are written (write resolves only then)", async () => {
    const out = new Recorder();
    const writer = new OrderedWriter(out);
    let laterDone = false;
    const later = writer.write(1, 0, Buffer.from("b")).then(() => (laterDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(laterDone, false);
    assert.equal(out.chunks.length, 0);
    await writer.write(0, 0, Buffer.from("a"));
    await later;
    assert.equal(Buffer.concat(out.chunks).toString(), "ab");
  });

  it("never writes two chunks at once to the destination (backpressure is respected)", async () => {
    const out = new Recorder();
    out.delayMs = 2;
    const writer = new OrderedWriter(out);
    await Promise.all([5, 4, 3, 2, 1, 0].map((i) => writer.write(i, 0, Buffer.alloc(10, i))));
    assert.equal(out.maxInFlight, 1);
    assert.equal(out.chunks.length, 6);
  });

  it("fails every waiting part when the destination fails (e.g. EPIPE)", async () => {
    const out = new Recorder();
    const epipe = Object.assign(new Error("EPIPE"), { code: "EPIPE" });
    out.failWith = epipe;
    const writer = new OrderedWriter(out);
    const waiting = writer.write(1, 0, Buffer.from("b"));
    await assert.rejects(writer.write(0, 0, Buffer.from("a")), /EPIPE/);
    await assert.rejects(waiting, /EPIPE/);
    await assert.rejects(writer.write(2, 0, Buffer.from("c")), /EPIPE/);
    await assert.rejects(writer.commit(), /EPIPE/);
  });
});

describe("engine/sinks/ordered-writer window", () => {
  it("lets fetching run at most `window` parts ahead of the writer", async () => {
    const out = new Recorder();
    const writer = new OrderedWriter(out, 3);
    await writer.waitForRoom(0);
    await writer.waitForRoom(2);
    let roomFor3 = false;
    const wait3 = writer.waitForRoom(3).then(() => (roomFor3 = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(roomFor3, false, "part 3 must wait while part 0 is unwritten");
    await writer.write(0, 0, Buffer.from("a"));
    await wait3;
    assert.equal(roomFor3, true);
  });
});
