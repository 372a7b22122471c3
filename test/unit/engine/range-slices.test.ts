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
