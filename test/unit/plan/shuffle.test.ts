import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { UsageError } from "../../../src/plan/location.js";
import { parseSeed, shuffleOrder } from "../../../src/plan/shuffle.js";
import { seededRandom } from "../../support/shard-checks.js";

const keys = Array.from({ length: 1000 }, (_, i) => `train/sample-${String(i).padStart(5, "0")}.jpg`);
const asEntries = (list: readonly string[]) => list.map((key) => ({ key }));
const keyOf = (e: { key: string }) => e.key;

/** Fisher–Yates with a seeded generator: an input order unrelated to the keys. */
function scrambled<T>(list: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe("plan/shuffle", () => {
  it("gives the same order for one seed whatever order the keys came in", () => {
    const reference = shuffleOrder(asEntries(keys), "3", keyOf).map(keyOf);
    for (const inputSeed of [1, 2, 3]) {
      assert.deepEqual(shuffleOrder(asEntries(scrambled(keys, inputSeed)), "3", keyOf).map(keyOf), reference);
    }
    assert.deepEqual(shuffleOrder(asEntries([...keys].reverse()), "3", keyOf).map(keyOf), reference);
  });

  it("is a permutation: nothing lost, nothing duplicated", () => {
    const shuffled = shuffleOrder(asEntries(keys), "epoch-7", keyOf).map(keyOf);
    assert.equal(shuffled.length, keys.length);
    assert.deepEqual([...shuffled].sort(), [...keys].sort());
  });

  it("gives different orders for different seeds, and not the listing order", () => {
    const orders = ["0", "1", "2", "10", "seed"].map((seed) => shuffleOrder(asEntries(keys), seed, keyOf).map(keyOf).join("\n"));
    assert.equal(new Set(orders).size, orders.length);
    assert.ok(!orders.includes(keys.join("\n")));
    // Not merely rotated: the first keys of two epochs differ almost everywhere.
    const [first, second] = orders.map((o) => o.split("\n"));
    const samePlace = first.filter((key, i) => second[i] === key).length;
    assert.ok(samePlace < 20, `${samePlace} of 1000 keys in the same place for seeds 0 and 1`);
  });

  it("ranks by SHA-256(seed NUL key): the same order on every machine and Node version", () => {
    const rank = (seed: string, key: string) => createHash("sha256").update(`${seed}\0${key}`, "utf8").digest("hex");
    const expected = [...keys].sort((a, b) => (rank("42", a) < rank("42", b) ? -1 : 1));
    assert.deepEqual(shuffleOrder(asEntries(keys), "42", keyOf).map(keyOf), expected);
    // Unicode keys hash as UTF-8.
    const unicode = ["données/é.bin", "数据/1.bin", "emoji/🙂.bin", "plain.bin"];
    const unicodeExpected = [...unicode].sort((a, b) => (rank("s", a) < rank("s", b) ? -1 : 1));
    assert.deepEqual(shuffleOrder(asEntries(unicode), "s", keyOf).map(keyOf), unicodeExpected);
  });

  it("keeps duplicate keys (a manifest may list an object twice)", () => {
    const withDuplicates = [{ key: "a", n: 1 }, { key: "b", n: 2 }, { key: "a", n: 3 }];
    const shuffled = shuffleOrder(withDuplicates, "1", keyOf);
    assert.equal(shuffled.length, 3);
    assert.deepEqual(shuffled.filter((e) => e.key === "a").map((e) => e.n), [1, 3]);
  });

  it("accepts any non-empty seed verbatim and refuses an empty one", () => {
    assert.equal(parseSeed("7"), "7");
    assert.equal(parseSeed("epoch 7"), "epoch 7");
    assert.throws(() => parseSeed(""), (err: unknown) => err instanceof UsageError && /invalid --shuffle "": expected a seed/.test(err.message));
  });
});
