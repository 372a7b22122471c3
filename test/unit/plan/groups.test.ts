import assert from "node:assert/strict";
import { compileFilters } from "../../../src/plan/filters.js";
import { compareUtf8, groupEntries, parseGroupBy, stemOf } from "../../../src/plan/groups.js";
import { UsageError } from "../../../src/plan/location.js";
import { orderedSource } from "../../../src/plan/set-order.js";
import type { SetEntry, SetSource, SourceItem } from "../../../src/plan/set-plan.js";

/** A listed prefix in memory, in the order given. */
function memorySource(paths: [string, number][]): SetSource<string> {
  return {
    side: "s3",
    name: "s3://b/p/",
    whole: false,
    shown: (entry: SetEntry<string>) => `s3://b/p/${entry.relativePath}`,
    described: (entry: SetEntry<string>) => `key "${entry.ref}"`,
    async *items(): AsyncGenerator<SourceItem<string>> {
      for (const [path, size] of paths) yield { entry: { relativePath: path, size, mtimeMs: 0, ref: path } };
    },
  };
}

async function read(source: SetSource<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of source.items()) if ("entry" in item) out.push(item.entry.relativePath);
  return out;
}

/** The stems of `paths`, each run of equal stems counted once: equal to the distinct stems only if each stem's paths are adjacent. */
function runsOfStems(paths: readonly string[]): string[] {
  return paths.map(stemOf).filter((stem, i, all) => i === 0 || all[i - 1] !== stem);
}

describe("plan/groups: --group-by stem", () => {
  it("the stem is the key up to the first dot of its last path component (WebDataset's rule)", () => {
    assert.equal(stemOf("a/b/000123.seg.jpg"), "a/b/000123");
    assert.equal(stemOf("000123.jpg"), "000123");
    assert.equal(stemOf("s3://bucket/train/000123.cls"), "s3://bucket/train/000123");
    assert.equal(stemOf("v1.2/x.jpg"), "v1.2/x", "a dot in a directory name does not count");
    assert.equal(stemOf("a/b/README"), "a/b/README", "no dot: the key is its own stem");
    assert.equal(stemOf("v1.2/README"), "v1.2/README");
  });

  it("reads stem and refuses anything else, naming it", () => {
    assert.equal(parseGroupBy("stem"), "stem");
    assert.throws(() => parseGroupBy("prefix"), (err: unknown) => err instanceof UsageError && /invalid --group-by "prefix": expected stem/.test(err.message));
  });

  it("gathers a stem's entries in the order of its first member, each group in key order, sizes summed", () => {
    const entries = [["x/2.cls", 1], ["x/1.jpg", 10], ["x/2.jpg", 20], ["x/1.cls", 2], ["x/3", 5]] as const;
    const groups = groupEntries(entries, ([key]) => key, ([, size]) => size);
    assert.deepEqual(groups.map((g) => [g.name, g.members.map(([key]) => key), g.size]), [
      ["x/2", ["x/2.cls", "x/2.jpg"], 21],
      ["x/1", ["x/1.cls", "x/1.jpg"], 12],
      ["x/3", ["x/3"], 5],
    ]);
  });

  it("orders a group's keys as S3 lists them (UTF-8 bytes), astral characters after U+E000..U+FFFF", () => {
    const keys = ["x/1.\u{1F600}", "x/1.\uFF01", "x/1.a", "x/1.é", "x/1.", "x/1.\uE000b", "x/1.ab", "x/1"];
    const groups = groupEntries(keys, (key) => key, () => 1);
    const utf8 = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    assert.deepEqual(groups.map((g) => g.members), [utf8]);
    for (const a of keys) for (const b of keys) assert.equal(Math.sign(compareUtf8(a, b)), Buffer.compare(Buffer.from(a), Buffer.from(b)), `${a} vs ${b}`);
  });

  const samples = Array.from({ length: 30 }, (_, i) => String(i).padStart(6, "0"));
  // Listing order interleaves stems where a directory name has a dot: "d/000001.jpg" < "d/000001.x/…" < "d/000001.txt".
  const listing: [string, number][] = samples.flatMap((s, i): [string, number][] => [[`d/${s}.cls`, 3], [`d/${s}.jpg`, 100 + i * 10], [`d/${s}.seg.png`, 50]]);
  listing.push(["d/000001.x/inner.jpg", 7]);
  listing.sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const noFilters = compileFilters([]);

  it("--shard and --shuffle keep every stem in one shard, its objects adjacent and in key order; every object once", async () => {
    for (const count of [1, 2, 3, 7]) {
      for (const balance of ["bytes", "count"] as const) {
        const shards = await Promise.all(
          Array.from({ length: count }, (_, index) =>
            read(orderedSource(memorySource(listing), { shuffleSeed: "4", shard: { index, count, source: "test" }, shardBalance: balance, groupBy: "stem", filters: noFilters })),
          ),
        );
        const label = `N=${count}, ${balance}`;
        assert.deepEqual(shards.flat().sort(), listing.map(([p]) => p).sort(), `${label}: every object once`);
        const shardOfStem = new Map<string, number>();
        shards.forEach((paths, index) => {
          for (const path of paths) {
            const stem = stemOf(path);
            assert.equal(shardOfStem.get(stem) ?? index, index, `${label}: ${stem} in shards ${shardOfStem.get(stem)} and ${index}`);
            shardOfStem.set(stem, index);
          }
          const runs = runsOfStems(paths);
          assert.equal(runs.length, new Set(runs).size, `${label}: a stem's objects are adjacent: ${paths.join(" ")}`);
          for (const stem of runs) {
            const members = paths.filter((p) => stemOf(p) === stem);
            assert.deepEqual(members, [...members].sort(), `${label}: ${stem} in key order`);
          }
        });
        if (balance === "count") {
          // With grouping, count balances groups (stems), not objects.
          const stems = shards.map((paths) => new Set(paths.map(stemOf)).size);
          assert.ok(Math.max(...stems) - Math.min(...stems) <= 1, `${label}: stems per shard ${stems.join(",")} differ by more than 1`);
        }
      }
    }
  });

  it("the shuffle moves whole stems: a new seed another order of stems, the same seed the same", async () => {
    const order = (seed: string) => read(orderedSource(memorySource(listing), { shuffleSeed: seed, groupBy: "stem", filters: noFilters }));
    const [a, again, b] = [await order("1"), await order("1"), await order("2")];
    assert.deepEqual(a, again);
    assert.notDeepEqual(runsOfStems(a), runsOfStems(b));
    for (const paths of [a, b]) assert.equal(runsOfStems(paths).length, samples.length + 1, "each stem's objects adjacent");
  });

  it("alone, gathers a stem's objects at its first place (a directory name's dot no longer splits them)", async () => {
    const got = await read(orderedSource(memorySource(listing), { groupBy: "stem", filters: noFilters }));
    assert.deepEqual(got.slice(3, 7), ["d/000001.cls", "d/000001.jpg", "d/000001.seg.png", "d/000001.x/inner.jpg"]);
    assert.equal(runsOfStems(got).length, samples.length + 1);
  });

  it("without --group-by each object is its own unit, as before: a stem's objects may land in different shards", async () => {
    const shards = await Promise.all([0, 1].map((index) => read(orderedSource(memorySource(listing), { shuffleSeed: "4", shard: { index, count: 2, source: "test" }, filters: noFilters }))));
    const split = samples.filter((s) => new Set(shards.map((paths) => paths.some((p) => stemOf(p) === `d/${s}`))).size > 1);
    assert.ok(split.length > 0, "some stem is split between shards");
  });
});
