import assert from "node:assert/strict";
import type { AddressStats } from "../../../../src/net/pools.js";
import { mergeAddressStats } from "../../../../src/engine/workers/address-stats.js";
import { BucketRegions } from "../../../../src/s3/region-redirects.js";

function stats(address: string, over: Partial<AddressStats> = {}): AddressStats {
  return { address, state: "healthy", requests: 1, errors: 0, stragglers: 0, bytesIn: 10, bytesOut: 0, rateBytesPerSec: 5, inFlight: 0, reachability: "unknown", hedges: 0, hedgesWon: 0, ...over };
}

describe("engine/workers: one view across threads", () => {
  it("merges the threads' per-address counters: counts add up, bad in any thread is bad, up in any is up", () => {
    const merged = mergeAddressStats([
      [stats("10.0.0.1"), stats("10.0.0.2", { reachability: "up" })],
      [stats("10.0.0.1", { requests: 3, bytesIn: 30, hedges: 1, hedgesWon: 1, state: "bad", lastProblem: "reset", reachability: "up" })],
      [stats("10.0.0.3", { errors: 2 })],
    ]);
    assert.deepEqual(
      merged.map((a) => [a.address, a.requests, a.bytesIn, a.hedgesWon, a.state, a.reachability, a.lastProblem]),
      [
        ["10.0.0.1", 4, 40, 1, "bad", "up", "reset"],
        ["10.0.0.2", 1, 10, 0, "healthy", "up", undefined],
        ["10.0.0.3", 1, 10, 0, "healthy", "unknown", undefined],
      ],
    );
  });

  it("a worker's requester takes the main thread's knowledge of a bucket: its learnt region, or that it was answered", async () => {
    const main = new BucketRegions();
    main.learn("far", "eu-west-3");
    await main.inTurn("near", async () => undefined);
    const worker = new BucketRegions();
    worker.adopt("far", main.knowledgeOf("far"));
    worker.adopt("near", main.knowledgeOf("near"));
    worker.adopt("new", main.knowledgeOf("new"));
    assert.equal(worker.regionOf("far"), "eu-west-3");
    assert.deepEqual(worker.knowledgeOf("near"), { settled: true, region: undefined });
    assert.deepEqual(worker.knowledgeOf("new"), { settled: false, region: undefined });
  });
});
