import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { watchAbort } from "../../../src/net/abort-watch.js";

describe("net/abort-watch", () => {
  it("calls every watcher once when the signal aborts, through one listener on the signal", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const stops = ["a", "b", "c"].map((name) => watchAbort(controller.signal, () => calls.push(name)));
    assert.equal(getEventListeners(controller.signal, "abort").length, 1);
    stops[1]();
    controller.abort(new Error("stop"));
    controller.abort(new Error("again"));
    assert.deepEqual(calls, ["a", "c"]);
  });

  it("never calls a stopped watcher, however many came and went", () => {
    const controller = new AbortController();
    let called = 0;
    for (let i = 0; i < 5000; i++) watchAbort(controller.signal, () => called++)();
    const last = watchAbort(controller.signal, () => called++);
    controller.abort();
    assert.equal(called, 1);
    last();
  });

  it("keeps signals apart", () => {
    const first = new AbortController();
    const second = new AbortController();
    const calls: string[] = [];
    watchAbort(first.signal, () => calls.push("first"));
    watchAbort(second.signal, () => calls.push("second"));
    second.abort();
    assert.deepEqual(calls, ["second"]);
  });
});
