import assert from "node:assert/strict";
import { compileFilters } from "../../../src/plan/filters.js";
import { orderedSource } from "../../../src/plan/set-order.js";
import type { SetEntry, SetSource, SourceItem } from "../../../src/plan/set-plan.js";
import { shuffleOrder } from "../../../src/plan/shuffle.js";

/** A listed prefix in memory, with one unreadable part. */
function memorySource(paths: [string, number][], problem?: string): SetSource<string> & { whole: boolean } {
  return {
    side: "s3",
    name: "s3://b/p/",
    whole: false,
    shown: (entry: SetEntry<string>) => `s3://b/p/${entry.relativePath}`,
    described: (entry: SetEntry<string>) => `key "${entry.ref}"`,
    async *items(): AsyncGenerator<SourceItem<string>> {
      for (const [path, size] of paths) yield { entry: { relativePath: path, size, mtimeMs: 0, ref: path } };
      if (problem) yield { problem: { shown: problem, message: "cannot read" } };
      this.whole = true;
    },
  };
}

async function read(source: SetSource<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of source.items()) out.push("entry" in item ? item.entry.relativePath : `problem:${item.problem.shown}`);
  return out;
}

describe("plan/set-order: --shuffle and --shard over a source", () => {
  const paths: [string, number][] = Array.from({ length: 40 }, (_, i) => [`f${String(i).padStart(2, "0")}.bin`, (i * 37) % 11]);
  const noFilters = compileFilters([]);

  it("shuffles the whole source by seed, then each worker takes its shard of that order", async () => {
    const shuffled = shuffleOrder(paths.map(([p]) => p), "5", (p) => `s3://b/p/${p}`);
    const shards = await Promise.all([0, 1, 2].map((index) => read(orderedSource(memorySource(paths), { shuffleSeed: "5", shard: { index, count: 3, source: "test" }, filters: noFilters }))));
    assert.deepEqual(shards.flat().sort(), paths.map(([p]) => p).sort(), "every entry once");
    for (const shard of shards) {
      const positions = shard.map((p) => shuffled.indexOf(p));
      assert.deepEqual(positions, [...positions].sort((a, b) => a - b), "a shard keeps the shuffled order");
    }
  });

  it("leaves entries the filters exclude out of the split, and passes problems through", async () => {
    const filters = compileFilters([{ kind: "exclude", pattern: "f1*" }]);
    const got = await read(orderedSource(memorySource(paths, "p/locked"), { shard: { index: 0, count: 1, source: "test" }, filters }));
    assert.equal(got[0], "problem:p/locked");
    assert.deepEqual(got.slice(1), paths.map(([p]) => p).filter((p) => !p.startsWith("f1")));
  });

  it("is whole only once the source was read to its end", async () => {
    const inner = memorySource(paths);
    const ordered = orderedSource(inner, { shuffleSeed: "1", filters: noFilters });
    assert.equal(ordered.whole, false);
    await read(ordered);
    assert.equal(ordered.whole, true);
  });
});
