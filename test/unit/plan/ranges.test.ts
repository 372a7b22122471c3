import assert from "node:assert/strict";
import { coveredBytes, missingRanges } from "../../../src/plan/ranges.js";

describe("plan/ranges", () => {
  it("nothing done: the whole object in part-size pieces", () => {
    assert.deepEqual(missingRanges([], 25, 10), [
      { offset: 0, length: 10 },
      { offset: 10, length: 10 },
      { offset: 20, length: 5 },
    ]);
  });

  it("fills only the gaps, whatever order and overlap the journal has", () => {
    const done = [
      { offset: 30, length: 10 },
      { offset: 0, length: 10 },
      { offset: 5, length: 10 }, // overlaps the first
    ];
    assert.deepEqual(missingRanges(done, 50, 8), [
      { offset: 15, length: 8 },
      { offset: 23, length: 7 },
      { offset: 40, length: 8 },
      { offset: 48, length: 2 },
    ]);
    assert.equal(coveredBytes(done), 25);
  });

  it("everything done: nothing to fetch; an empty object has nothing either", () => {
    assert.deepEqual(missingRanges([{ offset: 0, length: 50 }], 50, 8), []);
    assert.deepEqual(missingRanges([], 0, 8), []);
  });

  it("ignores journal entries past the end", () => {
    assert.deepEqual(missingRanges([{ offset: 40, length: 100 }], 50, 100), [{ offset: 0, length: 40 }]);
  });
});
