import assert from "node:assert/strict";
import { ProgressDisplay } from "../../../src/cli/progress.js";

describe("cli/progress: the progress line's text", () => {
  it("a known total: bar, percentage, bytes of total, rate, ETA", () => {
    const display = new ProgressDisplay(false);
    display.addTotal(10 * 1024 * 1024);
    display.addDone(5 * 1024 * 1024);
    assert.match(display.line(), /^█{10}░{10} 50% \| 5 MiB \/ 10 MiB \| [0-9.]+ MB\/s \| ETA \d+s$/);
  });

  it("a stream of unknown length (stdin): bytes and rate only, no total, percentage or ETA", () => {
    const display = new ProgressDisplay(false);
    display.totalUnknown();
    // What an upload from stdin reports: each part read adds to the total as much as it adds to the done.
    display.addTotal(8 * 1024 * 1024);
    display.addDone(8 * 1024 * 1024);
    assert.match(display.line(), /^8 MiB \| [0-9.]+ MB\/s$/);
    assert.doesNotMatch(display.line(), /%|ETA| \/ /);
  });

  it("objects, when a listing counts them", () => {
    const display = new ProgressDisplay(false);
    display.addTotal(100);
    display.addObjects(3);
    display.objectDone();
    assert.match(display.line(), / \| 1\/3 objects \| /);
  });
});
