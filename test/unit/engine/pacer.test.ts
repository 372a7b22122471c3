import assert from "node:assert/strict";
import { RetryPacer } from "../../../src/engine/pacer.js";
import { RequestError, withRetries } from "../../../src/engine/retry.js";

function slowDown(): Error {
  return Object.assign(new Error(""), { name: "SlowDown", $metadata: { httpStatusCode: 503 } });
}

describe("engine/pacer", () => {
  it("token bucket as the CRT: 500 tokens, 5 per throttle retry, 10 per transient, refund 1 per success", () => {
    const pacer = new RetryPacer();
    for (let i = 0; i < 50; i++) assert.ok(pacer.takeRetryToken("transient"));
    assert.equal(pacer.stats().tokens, 0);
    assert.equal(pacer.takeRetryToken("throttle"), false);
    assert.equal(pacer.stats().refusedRetries, 1);
    return (async () => {
      for (let i = 0; i < 5; i++) pacer.finish(await pacer.begin(), "success");
      assert.equal(pacer.stats().tokens, 5);
      assert.ok(pacer.takeRetryToken("throttle"));
    })();
  });

  it("halves attempts in flight on throttling, once per round, and grows back on success", async () => {
    let t = 0;
    const pacer = new RetryPacer(undefined, () => t);
    const wave = await Promise.all(Array.from({ length: 16 }, () => pacer.begin()));
    assert.equal(pacer.stats().limit, null);
    t = 1;
    // The whole wave was throttled: one decrease, not sixteen.
    for (const a of wave) pacer.finish(a, "throttle");
    assert.equal(pacer.stats().limit, 8);
    const next = await Promise.all(Array.from({ length: 8 }, () => pacer.begin()));
    let ninthStarted = false;
    const ninth = pacer.begin().then((a) => ((ninthStarted = true), a));
    await new Promise((r) => setImmediate(r));
    assert.equal(ninthStarted, false, "the ninth attempt waits");
    t = 2;
    pacer.finish(next[0], "throttle");
    assert.equal(pacer.stats().limit, 4);
    for (const a of next.slice(1)) pacer.finish(a, "success");
    pacer.finish(await ninth, "success");
    assert.ok(pacer.stats().limit! >= 4);
  });

  it("an urgent attempt (one that attempts in flight wait for) takes a slot above the limit instead of waiting for theirs", async () => {
    let t = 0;
    const pacer = new RetryPacer(undefined, () => t);
    const first = await pacer.begin();
    t = 1;
    pacer.finish(first, "throttle");
    assert.equal(pacer.stats().limit, 1);
    const holder = await pacer.begin();
    let ordinaryStarted = false;
    const ordinary = pacer.begin().then((a) => ((ordinaryStarted = true), a));
    const urgent = await pacer.begin(undefined, true);
    await new Promise((r) => setImmediate(r));
    assert.equal(ordinaryStarted, false, "an ordinary attempt still waits for the slot");
    pacer.finish(urgent, "success");
    pacer.finish(holder, "success");
    pacer.finish(await ordinary, "success");
  });

  it("withRetries fails at once when the bucket is empty, naming the address and attempts", async () => {
    const pacer = new RetryPacer({ capacity: 10, throttleCost: 5, transientCost: 10, successRefund: 1 });
    const policy = { maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 1, pacer };
    let calls = 0;
    await assert.rejects(
      withRetries("UploadPart 7 of s3://b/k", policy, async (_n, routing) => {
        calls++;
        routing.address = `127.0.0.${calls + 1}`;
        throw slowDown();
      }),
      (err: Error) => {
        assert.ok(err instanceof RequestError);
        assert.equal(
          err.message,
          "UploadPart 7 of s3://b/k: SlowDown: the server asked to slow down (HTTP 503) via 127.0.0.4 after 3 attempts (also tried 127.0.0.2, 127.0.0.3); no retry left in the endpoint's retry budget (too many failures across the transfer)",
        );
        return true;
      },
    );
    assert.equal(calls, 3);
  });

  it("withRetries asks the next attempt to avoid the addresses that failed", async () => {
    const seenAvoid: string[][] = [];
    const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 };
    await withRetries("GET x", policy, async (n, routing) => {
      seenAvoid.push([...routing.avoid]);
      routing.address = `10.0.0.${n}`;
      if (n < 2) throw Object.assign(new Error("reset"), { code: "ECONNRESET" });
      return "ok";
    });
    assert.deepEqual(seenAvoid, [[], ["10.0.0.0"], ["10.0.0.0", "10.0.0.1"]]);
  });
});
