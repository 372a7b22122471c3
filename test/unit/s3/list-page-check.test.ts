import assert from "node:assert/strict";
import { checkListingPage, ListingPageError } from "../../../src/s3/list.js";

describe("s3/list: every ListObjectsV2 page is checked before use", () => {
  it("accepts whole pages: counted keys and prefixes, a token when truncated, no KeyCount at all", () => {
    checkListingPage({ IsTruncated: false, KeyCount: 0 });
    checkListingPage({ IsTruncated: false, KeyCount: 3, Contents: [{ Key: "a" }, { Key: "b" }], CommonPrefixes: [{}] });
    checkListingPage({ IsTruncated: true, NextContinuationToken: "t", Contents: [{ Key: "a" }] });
    // An empty page that still goes on is legal (S3 may send one).
    checkListingPage({ IsTruncated: true, KeyCount: 0, NextContinuationToken: "t" });
  });

  it("refuses a page whose KeyCount is not what was read, a truncated page without a token, a key-less entry, a non-listing", () => {
    const refused: [Parameters<typeof checkListingPage>[0], RegExp][] = [
      [{ IsTruncated: false, KeyCount: 1 }, /KeyCount is 1 but the page holds 0 keys and prefixes/],
      [{ IsTruncated: false, KeyCount: 1, Contents: [{ Key: "a" }, { Key: "b" }] }, /KeyCount is 1 but the page holds 2/],
      [{ IsTruncated: true, Contents: [{ Key: "a" }] }, /IsTruncated is true but there is no NextContinuationToken/],
      [{ IsTruncated: true, NextContinuationToken: "" }, /no NextContinuationToken/],
      [{ IsTruncated: false, Contents: [{ Key: "a" }, {}] }, /an entry has no Key/],
      [{}, /no IsTruncated/],
    ];
    for (const [page, why] of refused) {
      assert.throws(() => checkListingPage(page), (err: Error) => err instanceof ListingPageError && why.test(err.message), JSON.stringify(page));
    }
  });

  it("refuses a page that names a key or a common prefix outside the prefix listed, and accepts every key under it", () => {
    checkListingPage({ IsTruncated: false, Contents: [{ Key: "p4/a" }, { Key: "p4/b/c" }], CommonPrefixes: [{ Prefix: "p4/d/" }] }, "p4/");
    checkListingPage({ IsTruncated: false, Contents: [{ Key: "anything" }] }, "");
    const refused: [Parameters<typeof checkListingPage>[0], string, RegExp][] = [
      [{ IsTruncated: false, Contents: [{ Key: "p4/a" }, { Key: "zzz/keepme" }] }, "p4/", /it names "zzz\/keepme", outside the prefix "p4\/" that was listed/],
      // Same text, no slash: a sibling of the folder, not in it.
      [{ IsTruncated: false, Contents: [{ Key: "p4zz-outside" }] }, "p4/", /"p4zz-outside", outside the prefix "p4\/"/],
      [{ IsTruncated: false, Contents: [{ Key: "p" }] }, "p4/", /"p", outside/],
      [{ IsTruncated: false, CommonPrefixes: [{ Prefix: "p4/a/" }, { Prefix: "zzz/" }] }, "p4/", /"zzz\/", outside the prefix "p4\/"/],
    ];
    for (const [page, prefix, why] of refused) {
      assert.throws(() => checkListingPage(page, prefix), (err: Error) => err instanceof ListingPageError && why.test(err.message) && /nothing was done with it/.test(err.message), JSON.stringify(page));
    }
  });
});
