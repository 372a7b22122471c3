import assert from "node:assert/strict";
import { MemoryBudget } from "../../../src/engine/memory.js";

const M = 1024 * 1024;

describe("engine/memory", () => {
  it("never hands out more than the limit and serves waiters in order", async () => {
    const budget = new MemoryBudget(3 * M);
    const a = await budget.acquire(M);
    const b = await budget.acquire(M);
    const c = await budget.acquire(M);
    const served: string[] = [];
    const d = budget.acquire(M).then((buf) => (served.push("d"), buf));
    const e = budget.acquire(M).then((buf) => (served.push("e"), buf));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(served, []);
    assert.equal(budget.used, 3 * M);
    budget.release(b);
    const dBuf = await d;
    assert.deepEqual(served, ["d"]);
    assert.equal(dBuf, b, "the released part-sized buffer is reused");
    budget.release(a);
    await e;
    assert.deepEqual(served, ["d", "e"]);
    assert.equal(budget.peakUsed, 3 * M);
    budget.release(c);
  });

  it("does not let a small request overtake a waiting large one", async () => {
    const budget = new MemoryBudget(200);
    const a = await budget.acquire(150);
    const order: string[] = [];
    const big = budget.acquire(200).then((buf) => (order.push("big"), buf));
    const small = budget.acquire(10).then((buf) => (order.push("small"), buf));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, []);
    budget.release(a);
    budget.release(await big);
    await small;
    assert.deepEqual(order, ["big", "small"]);
  });

  it("rejects a part larger than the whole budget", async () => {
    await assert.rejects(new MemoryBudget(100).acquire(101), /raise --max-memory/);
  });

  it("rejects a waiter when its signal aborts", async () => {
    const budget = new MemoryBudget(100);
    await budget.acquire(100);
    const controller = new AbortController();
    const waiting = budget.acquire(50, controller.signal);
    controller.abort(new Error("stop"));
    await assert.rejects(waiting, /stop/);
  });
});
