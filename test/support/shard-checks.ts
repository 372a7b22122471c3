import assert from "node:assert/strict";
import { assignShards, pickShard } from "../../src/plan/shard.js";

/** Checks for the shard property tests (test/unit/plan/shard.test.ts, manifest.test.ts). */

/** mulberry32: a tiny seeded PRNG, so a failing case reproduces from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Checks the split's promises for one N; returns the shards for further checks. */
export function assertGoodSplit<T>(entries: readonly T[], count: number, sizeOf: (e: T) => number, label: string): number[] {
  const shards = assignShards(entries, count, sizeOf);
  assert.equal(shards.length, entries.length, `${label}: one shard per entry`);
  const picked = Array.from({ length: count }, (_, index) => pickShard(entries, { index, count }, sizeOf));
  // Disjoint and covering: every entry is in exactly one picked shard, the one assignShards named.
  const seen = new Map<T, number>();
  picked.forEach((part, index) => {
    for (const entry of part) {
      assert.equal(seen.has(entry), false, `${label}: an entry is in shards ${seen.get(entry)} and ${index}`);
      seen.set(entry, index);
    }
  });
  assert.equal(seen.size, entries.length, `${label}: the shards cover every entry`);
  entries.forEach((entry, i) => assert.equal(seen.get(entry), shards[i], `${label}: pickShard agrees with assignShards`));
  // Each part keeps the input order.
  const positionOf = new Map(entries.map((entry, i) => [entry, i]));
  for (const part of picked) {
    const positions = part.map((e) => positionOf.get(e) ?? -1);
    assert.deepEqual(positions, [...positions].sort((a, b) => a - b), `${label}: a shard keeps the input order`);
  }
  const totals = picked.map((part) => part.reduce((sum, e) => sum + sizeOf(e), 0));
  const largest = entries.reduce((max, e) => Math.max(max, sizeOf(e)), 0);
  const spread = Math.max(...totals) - Math.min(...totals);
  assert.ok(spread <= largest, `${label}: shard byte totals differ by ${spread} > largest entry ${largest}`);
  if (entries.length >= count) picked.forEach((part, index) => assert.ok(part.length > 0, `${label}: shard ${index} is empty`));
  assert.deepEqual(assignShards(entries, count, sizeOf), shards, `${label}: the same split when run again`);
  return shards;
}

