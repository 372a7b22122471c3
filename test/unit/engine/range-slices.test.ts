import assert from "node:assert/strict";
import { RangeSlices } from "../../../src/engine/range-slices.js";

/** Writes recorded as (offset, bytes), each taking a while, so slices overlap with the next fill. */
function recorder(delayMs = 1, failAt?: number) {
  const writes: { offset: number; bytes: string }[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const land = async (offset: number, data: Buffer): Promise<void> => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    inFlight--;
    if (offset === failAt) throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
    writes.push({ offset, bytes: data.toString() });
  };
  return { writes, land, mostInFlight: () => mostInFlight };
}

/** Puts `text` into the slices as a body would, calling full() whenever the slice fills. */
async function pour(slices: RangeSlices, text: string): Promise<void> {
  for (let taken = 0; taken < text.length; ) {
    const { buffer, filled } = slices.current();
    const n = Math.min(buffer.length - filled, text.length - taken);
    buffer.write(text.slice(taken, taken + n), filled);
    slices.advance(n);
    taken += n;
    if (filled + n === buffer.length) await slices.full();
  }
}

describe("engine/range-slices", () => {
  it("writes a range slice by slice at its object offsets, one write at a time and in order, the partial last slice at finish", async () => {
    const { writes, land, mostInFlight } = recorder();
    const slices = new RangeSlices([Buffer.alloc(4), Buffer.alloc(4)], 100, land);
    await pour(slices, "abcdefghij");
    await slices.finish();
    assert.deepEqual(writes, [
      { offset: 100, bytes: "abcd" },
      { offset: 104, bytes: "efgh" },
      { offset: 108, bytes: "ij" },
    ]);
    assert.equal(mostInFlight(), 1);
  });

  it("keeps a partly filled slice across a retry (the next attempt continues it) and writes a hedge's tail after it", async () => {
    const { writes, land } = recorder();
    const slices = new RangeSlices([Buffer.alloc(4), Buffer.alloc(4)], 0, land);
    await pour(slices, "abcdef"); // attempt 1 dies after 6 bytes
    await pour(slices, "gh"); // attempt 2 continues the slice
    await pour(slices, "i"); // then a duplicate elsewhere wins with the rest
    slices.appendTail(Buffer.from("jkl"));
    await slices.finish();
    assert.deepEqual(writes, [
      { offset: 0, bytes: "abcd" },
      { offset: 4, bytes: "efgh" },
      { offset: 8, bytes: "i" },
      { offset: 9, bytes: "jkl" },
    ]);
  });

  it("hands on a full slice at once only when the other one is free: not while its write runs, never after a write failed", async () => {
    let release: (() => void) | undefined;
    const writes: string[] = [];
    const slices = new RangeSlices([Buffer.alloc(2), Buffer.alloc(2)], 0, async (offset, data) => {
      writes.push(`${offset}:${data.toString()}`);
      if (offset === 2) await new Promise<void>((resolve) => (release = resolve));
      if (offset === 4) throw new Error("EIO");
    });
    const fill = (text: string): void => {
      const { buffer, filled } = slices.current();
      buffer.write(text, filled);
      slices.advance(text.length);
    };
    fill("ab");
    const second = slices.handOnIfFree();
    assert.ok(second && second === slices.current().buffer && slices.current().filled === 0, "the other slice, empty");
    await slices.settled();
    fill("cd");
    assert.ok(slices.handOnIfFree(), "the first slice's write has ended");
    await new Promise((resolve) => setImmediate(resolve));
    fill("ef");
    assert.equal(slices.handOnIfFree(), undefined, "the write of cd still runs");
    release!();
    const waited = slices.full(); // hands ef on once cd is written
    await waited;
    await slices.settled();
    fill("gh");
    assert.equal(slices.handOnIfFree(), undefined, "the write of ef failed: nothing more is handed on");
    assert.deepEqual(writes, ["0:ab", "2:cd", "4:ef"]);
    await assert.rejects(slices.full(), /EIO/);
  });

  it("a failed write fails the range for good, at the next full slice or at finish", async () => {
    const early = recorder(1, 0);
    const first = new RangeSlices([Buffer.alloc(4), Buffer.alloc(4)], 0, early.land);
    await assert.rejects(pour(first, "abcdefghijkl"), /no space left/);
    await first.settled();

    const late = recorder(1, 8);
    const last = new RangeSlices([Buffer.alloc(4), Buffer.alloc(4)], 0, late.land);
    await pour(last, "abcdefghij");
    await assert.rejects(last.finish(), /no space left/);
  });
});
