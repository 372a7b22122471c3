import assert from "node:assert/strict";
import { AddressResolver } from "../../../src/net/resolver.js";
import { DEFAULT_NET_OPTIONS } from "../../../src/net/net-options.js";
import { HostAddresses } from "../../../src/net/pools/host-addresses.js";
import { StragglerError, StragglerWatch, DEFAULT_STRAGGLER_OPTIONS, type TrackedRequest } from "../../../src/net/stragglers.js";
import { EventLoopLagClock } from "../../../src/net/loop-lag.js";

const MiB = 1024 * 1024;

describe("net/stragglers", () => {
  let host: HostAddresses;
  let watch: StragglerWatch;
  beforeEach(() => {
    host = new HostAddresses("s3.example", "http:", 9, DEFAULT_NET_OPTIONS, new AddressResolver(), {
      addresses: ["127.0.0.2", "127.0.0.3", "127.0.0.4"],
      ttlMs: Infinity,
      source: "pinned",
    });
    watch = new StragglerWatch(host, { ...DEFAULT_STRAGGLER_OPTIONS, checkEveryMs: 60_000 });
  });
  afterEach(async () => {
    watch.close();
    await host.close();
  });

  /** Tracks a request that started `ageSeconds` before `t0`. */
  function request(addressIndex: number, t0: number, ageSeconds = 0, size = 64 * MiB) {
    const cancelled: Error[] = [];
    const r = watch.track(host.addresses[addressIndex], size, (err) => cancelled.push(err))!;
    (r as { startedAt: number }).startedAt = t0 - ageSeconds * 1000;
    r.lastProgressAt = r.startedAt;
    return { r, cancelled };
  }

  /**
   * Moves every request at its rate (bytes/s) for `seconds`, judging every
   * 250 ms; the bytes count for the request's address too (its rate meter).
   */
  function run(rs: { r: TrackedRequest; rate: number }[], t0: number, seconds: number): number {
    let now = t0;
    for (let step = 0; step < seconds * 4; step++) {
      now += 250;
      for (const { r, rate } of rs) {
        if (rate <= 0) continue;
        r.progress(Math.round(rate / 4), now);
        // The watch sees an address through its small interface; the host has the whole address.
        const address = host.addresses.find((a) => a === r.address)!;
        address.noteBytesIn(Math.round(rate / 4));
        // The test's clock is simulated: the address moved bytes at `now`.
        address.lastBytesAt = now;
      }
      watch.check(now);
    }
    return now;
  }

  it("leaves healthy requests alone, even when they differ by 3×", () => {
    const t0 = Date.now() - 10_000;
    const rs = [request(0, t0), request(1, t0), request(2, t0), request(0, t0)];
    run(rs.map((x, i) => ({ r: x.r, rate: [3e6, 9e6, 6e6, 5e6][i] })), t0, 3);
    assert.ok(rs.every((x) => x.cancelled.length === 0));
  });

  it("cancels a request far slower than its siblings on an address that is slow as a whole", () => {
    const t0 = Date.now() - 10_000;
    const slow = request(0, t0);
    const others = [request(1, t0), request(2, t0), request(1, t0), request(2, t0)];
    run([{ r: slow.r, rate: 0.5e6 }, ...others.map((x) => ({ r: x.r, rate: 8e6 }))], t0, 3);
    assert.equal(slow.cancelled.length, 1);
    assert.ok(slow.cancelled[0] instanceof StragglerError);
    assert.match(slow.cancelled[0].message, /127\.0\.0\.2 ran at 0\.5 MB\/s while its siblings ran at 8\.0 MB\/s/);
    assert.ok(others.every((x) => x.cancelled.length === 0));
    assert.equal(host.addresses[0].counters.stragglers, 1);
  });

  it("benches the address of a request that lost a hedged race, so the transfer's last requests go elsewhere", () => {
    const t0 = Date.now();
    const loser = request(0, t0);
    loser.r.lostToHedge();
    assert.ok(host.addresses[0].isBad());
    assert.match(host.stats()[0].lastProblem ?? "", /hedged duplicate on another address finished first/);
    // Three picks in a row (each would be a CompleteMultipartUpload) avoid it.
    for (let i = 0; i < 3; i++) assert.notEqual(host.pick().address, "127.0.0.2");
    // A second lost race while benched does not lengthen the cooldown.
    const until = host.addresses[0].badUntil;
    request(0, t0).r.lostToHedge();
    assert.equal(host.addresses[0].badUntil, until);
  });

  it("leaves a slow request alone while its address keeps pace with the others (one unlucky flow)", () => {
    const t0 = Date.now() - 10_000;
    const slow = request(0, t0);
    const others = [request(0, t0), request(1, t0), request(2, t0), request(1, t0)];
    run([{ r: slow.r, rate: 0.5e6 }, ...others.map((x) => ({ r: x.r, rate: 8e6 }))], t0, 4);
    assert.equal(slow.cancelled.length, 0);
    assert.equal(host.addresses[0].counters.stragglers, 0);
  });

  it("does not count event-loop lag as a stall: a blocked process is not a silent address", () => {
    // A clock the test drives: wall time and event-loop lag move only when told.
    const clock = { wall: 1_000_000, lagMs: 0, observedNow: () => clock.wall - clock.lagMs, wallNow: () => clock.wall, update: () => undefined };
    const lagWatch = new StragglerWatch(host, { ...DEFAULT_STRAGGLER_OPTIONS, stallMs: 1_000, checkEveryMs: 60_000 }, clock);
    try {
      const a = lagWatch.track(host.addresses[1], 64 * MiB, () => undefined)!;
      const cancelled: Error[] = [];
      const b = lagWatch.track(host.addresses[0], 64 * MiB, (err) => cancelled.push(err))!;
      a.progress(MiB);
      b.progress(MiB);
      // The process cannot read its sockets for 1.3 s (GC, a loaded machine)…
      clock.wall += 1_300;
      clock.lagMs += 1_300;
      // …then sees A's bytes first and judges before B's bytes are read.
      a.progress(MiB);
      lagWatch.check();
      assert.equal(cancelled.length, 0, cancelled.map((e) => e.message).join("; "));
      // The same silence with an idle event loop is the address's: B is cancelled.
      clock.wall += 1_300;
      a.progress(MiB);
      lagWatch.check();
      assert.equal(cancelled.length, 1);
      assert.match(cancelled[0].message, /stalled for 1\.3 s/);
    } finally {
      lagWatch.close();
    }
  });

  /** A clock the test drives: wall time and event-loop lag move only when told. */
  function drivenClock() {
    const clock = { wall: 1_000_000, lagMs: 0, observedNow: () => clock.wall - clock.lagMs, wallNow: () => clock.wall, update: () => undefined };
    return clock;
  }

  it("suspends the rate verdict when the event loop stalled for longer than the rate window", () => {
    const clock = drivenClock();
    const lagWatch = new StragglerWatch(host, { ...DEFAULT_STRAGGLER_OPTIONS, checkEveryMs: 60_000 }, clock);
    try {
      const cancelled: Error[] = [];
      const b = lagWatch.track(host.addresses[0], 64 * MiB, (err) => cancelled.push(err))!;
      const siblings = [1, 2, 1, 2].map((i) => lagWatch.track(host.addresses[i], 64 * MiB, () => undefined)!);
      // 3 s of a healthy fleet: every request at 4 MB/s.
      for (let step = 0; step < 12; step++) {
        clock.wall += 250;
        for (const r of [b, ...siblings]) r.progress(1e6);
        lagWatch.check();
      }
      // The process cannot read its sockets for 2.5 s (a loaded machine)…
      clock.wall += 2_500;
      clock.lagMs += 2_500;
      // …then reads the siblings' waiting bytes first and judges before B's
      // are read: B "ran at 0.0 MB/s" over the window, and its address's meter
      // is the one that saw nothing.
      for (const r of siblings) {
        r.progress(1e6);
        host.addresses.find((a) => a === r.address)!.noteBytesIn(1e6);
      }
      lagWatch.check();
      assert.equal(cancelled.length, 0, cancelled.map((e) => e.message).join("; "));
      assert.equal(host.addresses[0].counters.stragglers, 0);
    } finally {
      lagWatch.close();
    }
  });

  it("counts bytes left unread while s3x's own consumer held the reads as progress, not as silence or a low rate", () => {
    const clock = drivenClock();
    const heldWatch = new StragglerWatch(host, { ...DEFAULT_STRAGGLER_OPTIONS, checkEveryMs: 60_000 }, clock);
    try {
      const cancelled: Error[] = [];
      const b = heldWatch.track(host.addresses[0], 64 * MiB, (err) => cancelled.push(err))!;
      const siblings = [1, 2, 1, 2].map((i) => heldWatch.track(host.addresses[i], 64 * MiB, () => undefined)!);
      const step = (moving: TrackedRequest[]): void => {
        clock.wall += 250;
        for (const r of moving) {
          r.progress(1e6);
          host.addresses.find((a) => a === r.address)!.noteBytesIn(1e6);
        }
        heldWatch.check();
      };
      for (let i = 0; i < 4; i++) step([b, ...siblings]);
      // B's part buffer is not ready (a slow disk): its reads are held for 3 s
      // while the server's bytes wait in the socket and the siblings move.
      b.holdReads(true);
      for (let i = 0; i < 12; i++) step(siblings);
      assert.equal(cancelled.length, 0, cancelled.map((e) => e.message).join("; "));
      // Reads resume and B keeps its siblings' pace: the held time is not in its rate.
      b.holdReads(false);
      for (let i = 0; i < 12; i++) step([b, ...siblings]);
      assert.equal(cancelled.length, 0, cancelled.map((e) => e.message).join("; "));
      // A silence after the reads resumed is the address's again.
      for (let i = 0; i < 12; i++) step(siblings);
      assert.equal(cancelled.length, 1);
      assert.match(cancelled[0].message, /^request to 127\.0\.0\.2 (stalled|ran at 0\.\d MB\/s)/);
    } finally {
      heldWatch.close();
    }
  });

  it("the event-loop lag clock counts a blocked event loop (at least the time it was blocked)", async () => {
    const clock = new EventLoopLagClock();
    clock.update();
    await new Promise((r) => setTimeout(r, 50));
    const blockedUntil = Date.now() + 300;
    while (Date.now() < blockedUntil);
    // The monitor's timer records the late tick once the loop runs again.
    await new Promise((r) => setTimeout(r, 50));
    clock.update();
    // Load can only lengthen the block, never shorten it.
    assert.ok(clock.lagMs >= 250, `lag measured: ${clock.lagMs} ms`);
    assert.ok(clock.observedNow() <= Date.now() - 250);
  });

  it("cancels a request that stalls mid-body while siblings progress, and marks its address bad", () => {
    const t0 = Date.now() - 10_000;
    const stalled = request(0, t0);
    const other = request(1, t0);
    let now = run([{ r: stalled.r, rate: 8e6 }, { r: other.r, rate: 8e6 }], t0, 1);
    now = run([{ r: other.r, rate: 8e6 }], now, 2.5);
    assert.equal(stalled.cancelled.length, 1);
    assert.match(stalled.cancelled[0].message, /stalled for 2\.0 s/);
    assert.equal(host.addresses[0].isBad(), true);
    assert.equal(other.cancelled.length, 0);
  });

  it("cancels a request that gets no first byte (black-holed connect) while siblings progress", () => {
    const t0 = Date.now() - 10_000;
    const waiting = request(0, t0);
    const other = request(1, t0);
    run([{ r: other.r, rate: 8e6 }], t0, 2.5);
    assert.equal(waiting.cancelled.length, 1);
    // No first-byte latencies seen yet: twice the 1 s floor.
    assert.match(waiting.cancelled[0].message, /sent no data for 2\.0 s/);
  });

  it("judges nothing when everything stops (the server, not an address)", () => {
    const t0 = Date.now() - 10_000;
    const a = request(0, t0);
    const b = request(1, t0);
    let now = run([{ r: a.r, rate: 8e6 }, { r: b.r, rate: 8e6 }], t0, 1);
    now = run([], now, 5);
    assert.equal(a.cancelled.length + b.cancelled.length, 0);
  });

  it("ignores small requests", () => {
    const r = watch.track(host.addresses[0], 64 * 1024, () => undefined);
    assert.equal(r, undefined);
  });
});
