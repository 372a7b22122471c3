import assert from "node:assert/strict";
import { rangePages } from "../../../src/engine/listing.js";
import { compareKeys, KeyRangePlanner } from "../../../src/plan/key-ranges.js";
import type { ListPage } from "../../../src/s3/list.js";
import { misleadingKeys } from "../../support/misleading-keys.js";

type Page = ListPage & { nextToken?: string };

/**
 * ListObjectsV2's paging over a sorted key list, as S3 answers it: up to
 * `pageSize` keys after the continuation token (here: the last key sent)
 * or after StartAfter. Counts requests and the most in flight at once.
 */
function bucketOf(keys: string[], pageSize: number, failOn?: (start: { token?: string; startAfter?: string }) => boolean, ignoresStartAfter = false, delayMs: () => number = () => 1) {
  const sorted = [...keys].sort(compareKeys);
  const stats = { requests: 0, inFlight: 0, maxInFlight: 0 };
  const list = async (start: { token?: string; startAfter?: string }): Promise<Page> => {
    stats.requests++;
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, delayMs()));
      if (failOn?.(start)) throw new Error("listing failed");
      const after = start.token ?? (ignoresStartAfter ? undefined : start.startAfter);
      const from = after === undefined ? 0 : sorted.findIndex((k) => compareKeys(k, after) > 0);
      const slice = from < 0 ? [] : sorted.slice(from, from + pageSize);
      const more = from >= 0 && from + pageSize < sorted.length;
      return {
        objects: slice.map((key) => ({ key, size: 0, lastModified: new Date(0), etag: '""' })),
        prefixes: [],
        nextToken: more ? slice[slice.length - 1] : undefined,
      };
    } finally {
      stats.inFlight--;
    }
  };
  return { list, stats, sorted };
}

/** The whole listing as the engine reads it: the first page, then ranges planned from it. */
async function listAll(keys: string[], pageSize: number, prefix = "", ignoresStartAfter = false, delayMs?: () => number) {
  const bucket = bucketOf(keys, pageSize, undefined, ignoresStartAfter, delayMs);
  const fallbacks: string[] = [];
  const listed: string[] = [];
  const first = await bucket.list({});
  listed.push(...first.objects.map((o) => o.key));
  if (first.nextToken) {
    const planner = KeyRangePlanner.fromFirstPage(prefix, listed, pageSize);
    assert.ok(planner, "a planner for these keys");
    for await (const page of rangePages(bucket.list, { prefix, pageSize, atMost: 16 }, planner, [...listed], first.nextToken, (reason) => fallbacks.push(reason))) listed.push(...page.objects.map((o) => o.key));
  }
  return { listed, fallbacks, ...bucket };
}

const numbered = (count: number, prefix: string, width = 4, tail = "") => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(width, "0")}${tail}`);

describe("rangePages (a listing cut into key ranges)", () => {
  it("answers arriving in any order never mix up the ranges: keys that end stretches early, re-planned again and again", async () => {
    // The integration test's keys (many.test), built to mislead the
    // planner. Answers take 0-6 ms, so ranges end in any order.
    const keys = misleadingKeys("mix/");
    for (let run = 0; run < 40; run++) {
      const { listed, sorted, fallbacks } = await listAll(keys, 25, "mix/", false, () => Math.floor(Math.random() * 7));
      assert.deepEqual(fallbacks, [], `run ${run}`);
      assert.deepEqual(listed, sorted, `run ${run}`);
    }
  });

  it("lists every key once, in order, with ranges listed at once", async () => {
    const { listed, sorted, stats } = await listAll(numbered(10_000, "tenk/"), 1000, "tenk/");
    assert.deepEqual(listed, sorted);
    // One request per page, plus the open-ended last range.
    assert.ok(stats.requests <= 12, `${stats.requests} requests`);
    assert.ok(stats.maxInFlight >= 4, `${stats.maxInFlight} at once`);
  });

  it("plans again after each stretch the first page spans (train/cat/…, then train/dog/…)", async () => {
    const keys = [...numbered(5_000, "train/cat/"), ...numbered(5_000, "train/dog/"), ...numbered(3_000, "val/")];
    const { listed, sorted, stats } = await listAll(keys, 500);
    assert.deepEqual(listed, sorted);
    // 26 pages one after another. Where a stretch ends early (cat/4999 of a
    // 0000–9999 guess) the ranges already under way come back empty: at most
    // one window (16) of them per stretch, listed at once.
    assert.ok(stats.requests <= 26 + 3 * 16, `${stats.requests} requests`);
  });

  it("costs few requests beyond the pages where folders hold two pages each", async () => {
    const keys = ["cat", "dog", "fox", "owl"].flatMap((c) => numbered(2_000, `train/${c}/`, 7, ".jpg"));
    const { listed, sorted, stats } = await listAll(keys, 1000);
    assert.deepEqual(listed, sorted);
    // 8 pages; each folder's end is found by a range that runs past it, whose
    // overflow starts the next folder: a few speculative ranges per folder at most.
    assert.ok(stats.requests <= 8 + 2 * 4 + 2, `${stats.requests} requests`);
  });

  it("keeps every key and the order whatever the keys (mixed scripts, lengths, a misleading first page)", async () => {
    const keys = [
      ...numbered(300, "a/"),
      "a/0299x", "a/0299 ", "a/~", "a/é", "a/中文", "a/😀", "a/\uE000",
      ...numbered(400, "b/", 6, ".jpg"),
      ...Array.from({ length: 300 }, (_, i) => `c/${(i * 7919).toString(36)}`),
      ...Array.from({ length: 200 }, (_, i) => `ü/${String.fromCodePoint(0x1f600 + (i % 50))}${i}`),
    ];
    for (const pageSize of [7, 50, 300]) {
      const { listed, sorted } = await listAll(keys, pageSize);
      assert.deepEqual(listed, sorted, `page size ${pageSize}`);
    }
  });

  it("starts over page by page, passing on every key once, when the server ignores StartAfter", async () => {
    const { listed, sorted, fallbacks } = await listAll(numbered(5_000, "k/"), 200, "k/", true);
    assert.deepEqual(listed, sorted);
    assert.equal(fallbacks.length, 1);
    assert.match(fallbacks[0]!, /out of S3's key order; listing page by page instead/);
  });

  it("fails, never skipping keys silently, when the listing changed before a page-by-page restart (rm -r deletes as it lists)", async () => {
    // One answer breaks S3's order (two keys swapped), and the reader
    // deletes every key it is handed, as rm -r does.
    const stored = numbered(5_000, "k/");
    let rangeRequests = 0;
    const list = async (start: { token?: string; startAfter?: string }): Promise<Page> => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const after = start.token ?? start.startAfter;
      const from = after === undefined ? 0 : stored.findIndex((k) => compareKeys(k, after) > 0);
      const slice = from < 0 ? [] : stored.slice(from, from + 200);
      if (start.startAfter !== undefined && ++rangeRequests === 4) [slice[10], slice[11]] = [slice[11]!, slice[10]!];
      const more = from >= 0 && from + 200 < stored.length;
      return { objects: slice.map((key) => ({ key, size: 0, lastModified: new Date(0), etag: '""' })), prefixes: [], nextToken: more ? slice[slice.length - 1] : undefined };
    };
    const remove = (keys: string[]) => keys.forEach((key) => stored.splice(stored.indexOf(key), 1));
    const first = await list({});
    const keys = first.objects.map((o) => o.key);
    remove(keys);
    const planner = KeyRangePlanner.fromFirstPage("k/", keys, 200)!;
    const fallbacks: string[] = [];
    await assert.rejects(async () => {
      for await (const page of rangePages(list, { prefix: "k/", pageSize: 200, atMost: 16 }, planner, keys, first.nextToken!, (reason) => fallbacks.push(reason))) remove(page.objects.map((o) => o.key));
    }, /the listing changed while it was restarted page by page .*run the command again/);
    assert.equal(fallbacks.length, 1);
  });

  it("hands a failed range's error to the reader", async () => {
    const bucket = bucketOf(numbered(3_000, "k/"), 100, (start) => start.startAfter !== undefined && start.startAfter > "k/1500");
    const first = await bucket.list({});
    const keys = first.objects.map((o) => o.key);
    const planner = KeyRangePlanner.fromFirstPage("k/", keys, 100)!;
    const listed: string[] = [];
    await assert.rejects(async () => {
      for await (const page of rangePages(bucket.list, { prefix: "k/", pageSize: 100, atMost: 16 }, planner, keys, first.nextToken!)) listed.push(...page.objects.map((o) => o.key));
    }, /listing failed/);
    assert.ok(listed.length > 1000 && listed.length < 1600, `${listed.length} keys before the failed range`);
  });
});
