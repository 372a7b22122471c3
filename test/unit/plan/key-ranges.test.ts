import assert from "node:assert/strict";
import { compareKeys, KeyRangePlanner } from "../../../src/plan/key-ranges.js";
import { seededRandom } from "../../support/shard-checks.js";

const utf8Compare = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Strings over a mix of ASCII, Latin-1, CJK, private-use (U+E000–U+FFFF) and astral characters. */
function randomKey(random: () => number): string {
  const pool = ["a", "b", "Z", "0", "9", "/", " ", "é", "ß", "中", "\uE000", "\uFFFD", "😀", "𝄞"];
  let key = "";
  const length = 1 + Math.floor(random() * 6);
  for (let i = 0; i < length; i++) key += pool[Math.floor(random() * pool.length)];
  return key;
}


/**
 * Every cut the planner proposes (at most `limit`). With `keys` (the whole
 * listing, in order), each range is recorded as listing it would show:
 * its keys, and the key that follows it.
 */
function cuts(planner: KeyRangePlanner, after: string, limit = 10_000, keys?: readonly string[]): string[] {
  const out: string[] = [];
  let lower = after;
  for (let cut = planner.nextCut(); cut !== undefined && out.length < limit; cut = planner.nextCut()) {
    out.push(cut);
    if (keys) {
      const inRange = keys.filter((k) => compareKeys(k, lower) > 0 && compareKeys(k, cut) <= 0).length;
      const next = keys.find((k) => compareKeys(k, cut) > 0);
      planner.record(lower, cut, inRange, next === undefined ? "none" : { key: next });
    }
    lower = cut;
  }
  return out;
}

describe("compareKeys", () => {
  it("orders keys by their UTF-8 bytes, as S3 does (not by UTF-16 code units)", () => {
    // U+E000 is one code unit above every surrogate in UTF-16, but below any astral character in UTF-8.
    assert.ok("\uE000" > "😀", "UTF-16 order puts U+E000 last");
    assert.ok(compareKeys("\uE000", "😀") < 0);
    assert.ok(compareKeys("a", "ab") < 0);
    assert.equal(compareKeys("same", "same"), 0);
    const random = seededRandom(7);
    for (let i = 0; i < 5_000; i++) {
      const a = randomKey(random);
      const b = randomKey(random);
      assert.equal(Math.sign(compareKeys(a, b)), Math.sign(utf8Compare(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  });
});

describe("KeyRangePlanner", () => {
  const numbered = (from: number, to: number, prefix = "tenk/") => Array.from({ length: to - from }, (_, i) => `${prefix}${String(from + i).padStart(4, "0")}`);

  /** How many of `keys` each range (after, cut], …, (last cut, ∞) holds. */
  const rangeSizes = (keys: readonly string[], after: string, found: readonly string[]): number[] =>
    [...found, undefined].map((upTo, i) => keys.filter((k) => compareKeys(k, i === 0 ? after : found[i - 1]!) > 0 && (upTo === undefined || compareKeys(k, upTo) <= 0)).length);

  it("cuts densely numbered keys a little under a page apart, then leaves the rest open-ended", () => {
    const planner = KeyRangePlanner.fromFirstPage("tenk/", numbered(0, 1000), 1000)!;
    const found = cuts(planner, "tenk/0999");
    assert.deepEqual(found.slice(0, 3), ["tenk/1949", "tenk/2899", "tenk/3849"]);
    const sizes = rangeSizes(numbered(1000, 10_000), "tenk/0999", found);
    assert.equal(sizes.length, 10);
    assert.ok(sizes.every((n) => n <= 1000), `every range fits in one page: ${sizes.join(" ")}`);
  });

  it("cuts keys with a shared tail (.jpg) between the keys, so ranges still fit in a page", () => {
    const images = Array.from({ length: 20_000 }, (_, i) => `images/${String(i).padStart(6, "0")}.jpg`);
    const planner = KeyRangePlanner.fromFirstPage("images/", images.slice(0, 1000), 1000)!;
    const found = cuts(planner, images[999]!);
    assert.ok(found.every((cut) => cut.startsWith("images/00")), "cuts stay in the stretch the first page spans");
    const sizes = rangeSizes(images.slice(1000), images[999]!, found);
    assert.ok(sizes.slice(0, -1).every((n) => n > 900 && n <= 1000), `ranges of about a page: ${sizes.join(" ")}`);
  });

  it("cuts uniformly spread keys (hashes) into ranges of about a page each", () => {
    const random = seededRandom(11);
    const hex = "0123456789abcdef";
    const all = [...new Set(Array.from({ length: 20_000 }, () => Array.from({ length: 16 }, () => hex[Math.floor(random() * 16)]).join("")))].sort(compareKeys);
    assert.equal(all.length, 20_000);
    const planner = KeyRangePlanner.fromFirstPage("", all.slice(0, 1000), 1000)!;
    const found = cuts(planner, all[999]!);
    // 19,000 keys left: about 19 ranges of about 1,000 keys.
    assert.ok(found.length >= 15 && found.length <= 25, `${found.length} cuts`);
    const sizes = rangeSizes(all, all[999]!, found);
    assert.equal(sizes.reduce((a, b) => a + b, 0), 19_000);
    assert.ok(Math.max(...sizes) < 2_000, `largest range ${Math.max(...sizes)} keys`);
  });

  it("proposes strictly increasing cuts after the first page, and stops, whatever the keys", () => {
    const random = seededRandom(3);
    for (let round = 0; round < 200; round++) {
      const all = [...new Set(Array.from({ length: 120 }, () => "p/" + randomKey(random)))].sort(compareKeys);
      const planner = KeyRangePlanner.fromFirstPage("p/", all.slice(0, 10), 10);
      if (!planner) continue;
      const found = cuts(planner, all[9]!, 100_000, all);
      let previous = all[9]!;
      for (const cut of found) {
        assert.ok(compareKeys(cut, previous) > 0, `${JSON.stringify(cut)} after ${JSON.stringify(previous)}`);
        assert.ok(cut.startsWith("p/"), "a cut stays within the listing's prefix");
        previous = cut;
      }
      assert.ok(found.length <= all.length, `${found.length} cuts for ${all.length} keys`);
    }
  });

  it("jumps a gap that an empty range reveals, and stops where the keys end", () => {
    // The first page is a dense run a0000–a0099; after it, a few keys far apart.
    const all = [...numbered(0, 100, "a"), "a0500", "a0501", "a7000", "a9998"];
    const planner = KeyRangePlanner.fromFirstPage("", all.slice(0, 100), 100)!;
    const found = cuts(planner, "a0099", 10_000, all);
    assert.ok(found.length <= 6, `${found.length} cuts: ${found.join(" ")}`);
  });

  it("stops cutting once the keys leave the stretch the first page spans", () => {
    const all = [...numbered(0, 3000, "cat/"), ...numbered(0, 3000, "dog/")];
    const planner = KeyRangePlanner.fromFirstPage("", all.slice(0, 1000), 1000)!;
    // cat/1000–cat/2999 take two or three ranges; the first range that sees dog/0000 ends the plan.
    assert.ok(cuts(planner, "cat/0999", 10_000, all).length <= 4);
  });

  it("declines when the first page says nothing about the rest", () => {
    assert.equal(KeyRangePlanner.fromFirstPage("x/", ["x/a"], 1000), undefined);
    assert.equal(KeyRangePlanner.fromFirstPage("x/", ["x/aaa", "x/aaa"], 1000), undefined);
    assert.equal(KeyRangePlanner.fromFirstPage("x/", ["x/é", "x/中"], 1000), undefined, "no printable ASCII to count with");
  });
});
