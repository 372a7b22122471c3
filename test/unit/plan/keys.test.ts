import assert from "node:assert/strict";
import { asDirectoryPrefix, placeKey } from "../../../src/plan/keys.js";

describe("plan/keys", () => {
  it("maps ordinary keys to relative paths", () => {
    assert.deepEqual(placeKey("a/b/c.txt"), { ok: true, relativePath: "a/b/c.txt", directoryMarker: false });
    assert.deepEqual(placeKey("a//b"), { ok: true, relativePath: "a/b", directoryMarker: false });
    assert.deepEqual(placeKey("a/./b"), { ok: true, relativePath: "a/b", directoryMarker: false });
    assert.deepEqual(placeKey("a/x/../b"), { ok: true, relativePath: "a/b", directoryMarker: false });
  });

  it("turns keys ending in / into directories", () => {
    assert.deepEqual(placeKey("dir/"), { ok: true, relativePath: "dir", directoryMarker: true });
  });

  it("refuses every key that would land outside the destination", () => {
    for (const key of ["../escape", "..", "a/../../b", "x/../../../etc/passwd", "../"]) {
      const placed = placeKey(key);
      assert.equal(placed.ok, false, key);
    }
    assert.deepEqual(placeKey("/abs"), { ok: false, reason: "the key is an absolute path" });
    assert.deepEqual(placeKey("a\0b"), { ok: false, reason: "the key contains a NUL byte" });
  });

  it("treats a prefix as a directory", () => {
    assert.equal(asDirectoryPrefix(""), "");
    assert.equal(asDirectoryPrefix("data"), "data/");
    assert.equal(asDirectoryPrefix("data/"), "data/");
  });
});
