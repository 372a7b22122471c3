import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
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

  it("removes a waiter's abort listener once it is served: none left on the signal after many waits", async () => {
    const budget = new MemoryBudget(M);
    const controller = new AbortController();
    for (let i = 0; i < 50; i++) {
      const held = await budget.acquire(M, controller.signal);
      const waiting = budget.acquire(M, controller.signal);
      assert.equal(getEventListeners(controller.signal, "abort").length, 1, "a waiting request listens");
      budget.release(held);
      budget.release(await waiting);
    }
    assert.equal(getEventListeners(controller.signal, "abort").length, 0);
  });

  it("removes an aborted waiter's listener, and rejects at once on a signal already aborted", async () => {
    const budget = new MemoryBudget(100);
    const held = await budget.acquire(100);
    const controller = new AbortController();
    const waiting = budget.acquire(50, controller.signal);
    controller.abort(new Error("stop"));
    await assert.rejects(waiting, /stop/);
    assert.equal(getEventListeners(controller.signal, "abort").length, 0);
    await assert.rejects(budget.acquire(50, controller.signal), /stop/);
    budget.release(held);
    assert.equal(budget.used, 0, "the rejected waiters took nothing");
  });

  it("hands out small buffers from power-of-two blocks, counts the blocks and reuses them", async () => {
    const budget = new MemoryBudget(64 * 1024);
    const a = await budget.acquire(5000);
    assert.equal(a.length, 5000);
    assert.equal(a.buffer.byteLength, 8192, "a view of an 8 KiB block");
    assert.equal(budget.used, 8192, "the budget counts the whole block");
    a.fill(7);
    budget.release(a);
    assert.equal(budget.used, 0);
    const b = await budget.acquire(6000);
    assert.equal(b.length, 6000);
    assert.equal(b.buffer, a.buffer, "the released block serves the next object of a similar size");
    const c = await budget.acquire(6000);
    assert.notEqual(c.buffer, a.buffer, "a block is handed out once at a time");
    const tiny = await budget.acquire(10);
    assert.equal(budget.used, 8192 * 2 + 4096, "at least a 4 KiB block");
    for (const buf of [b, c, tiny]) budget.release(buf);
    assert.equal(budget.used, 0);
  });

  it("waits for whole blocks: eight 8 KiB blocks fill a 64 KiB budget of 5,000-byte buffers", async () => {
    const budget = new MemoryBudget(64 * 1024);
    const held = await Promise.all(Array.from({ length: 8 }, () => budget.acquire(5000)));
    assert.equal(budget.tryAcquire(5000), undefined);
    let served = false;
    const next = budget.acquire(5000).then((buf) => ((served = true), buf));
    await new Promise((r) => setImmediate(r));
    assert.equal(served, false);
    budget.release(held[3]);
    assert.equal((await next).buffer, held[3].buffer);
  });

  it("drops cached small blocks when a bigger buffer needs their memory", async () => {
    const budget = new MemoryBudget(2 * M);
    const smalls = await Promise.all(Array.from({ length: 16 }, () => budget.acquire(60_000)));
    for (const buf of smalls) budget.release(buf);
    const big = await budget.acquire(2 * M);
    assert.equal(big.length, 2 * M);
    assert.equal(budget.used, 2 * M);
    budget.release(big);
    const again = await budget.acquire(60_000);
    assert.ok(!smalls.some((buf) => buf.buffer === again.buffer), "the small blocks were let go to make room");
    budget.release(again);
  });

  it("reserves bytes held in another thread in the same queue as buffers; tryReserve never waits", async () => {
    const budget = new MemoryBudget(4 * M);
    await budget.reserve(2 * M);
    const buffer = await budget.acquire(2 * M);
    assert.equal(budget.used, 4 * M);
    assert.equal(budget.tryReserve(M), false, "full: no optional reservation");
    const order: string[] = [];
    const reserved = budget.reserve(2 * M).then(() => order.push("reserve"));
    const acquired = budget.acquire(M).then((b) => (order.push("acquire"), b));
    budget.unreserve(2 * M);
    await reserved;
    budget.release(buffer);
    budget.release(await acquired);
    assert.deepEqual(order, ["reserve", "acquire"], "served in order, whatever the kind");
    budget.unreserve(2 * M);
    assert.equal(budget.used, 0);
    assert.equal(budget.tryReserve(M), true);
    budget.unreserve(M);
    const controller = new AbortController();
    await budget.reserve(4 * M);
    const waiting = budget.reserve(M, controller.signal);
    controller.abort(new Error("stop"));
    await assert.rejects(waiting, /stop/);
    budget.unreserve(4 * M);
    assert.equal(budget.used, 0);
  });

  it("with workers, hands out buffers in shared memory (SharedArrayBuffer) that it reuses", async () => {
    const budget = new MemoryBudget(4 * M, true);
    const a = await budget.acquire(M);
    assert.ok(a.buffer instanceof SharedArrayBuffer);
    budget.release(a);
    const b = await budget.acquire(M);
    assert.equal(b.buffer, a.buffer, "the released block is reused");
    const small = await budget.acquire(100);
    assert.ok(small.buffer instanceof SharedArrayBuffer);
    budget.release(b);
    budget.release(small);
  });

  it("a buffer of 512 KiB–1 MiB goes back whole: the next one taken from its block has the length asked for (a cat of a prefix failed so)", async () => {
    for (const shared of [false, true]) {
      const budget = new MemoryBudget(8 * M, shared);
      const first = await budget.acquire(931_327);
      assert.equal(first.length, 931_327);
      budget.release(first);
      const second = await budget.acquire(1_000_000);
      assert.equal(second.length, 1_000_000, "as long as asked for");
      assert.equal(second.buffer, first.buffer, "from the same block");
      budget.release(second);
      const whole = await budget.acquire(M);
      assert.equal(whole.length, M);
      budget.release(whole);
      assert.equal(budget.used, 0);
    }
  });
});
