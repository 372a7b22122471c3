import assert from "node:assert/strict";
import { needsCopy } from "../../../src/plan/sync.js";

describe("plan/sync (aws-cli rules)", () => {
  const rules = { sizeOnly: false, exactTimestamps: false };
  const t = Date.UTC(2026, 10, 22, 5, 0, 0);

  it("copies what the destination lacks", () => {
    assert.equal(needsCopy({ size: 1, mtimeMs: t }, undefined, "upload", rules), true);
  });

  it("copies when sizes differ, whatever the times", () => {
    assert.equal(needsCopy({ size: 2, mtimeMs: t - 60_000 }, { size: 1, mtimeMs: t }, "upload", rules), true);
  });

  it("uploads and copies a same-size source that is newer, skips one that is as old or older", () => {
    assert.equal(needsCopy({ size: 1, mtimeMs: t + 5_000 }, { size: 1, mtimeMs: t }, "upload", rules), true);
    assert.equal(needsCopy({ size: 1, mtimeMs: t }, { size: 1, mtimeMs: t }, "upload", rules), false);
    assert.equal(needsCopy({ size: 1, mtimeMs: t - 5_000 }, { size: 1, mtimeMs: t }, "copy", rules), false);
  });

  it("downloads a same-size object whose time differs either way (an object rewritten in S3 at the same size, or a local edit), skips equal times", () => {
    assert.equal(needsCopy({ size: 1, mtimeMs: t + 5_000 }, { size: 1, mtimeMs: t }, "download", rules), true);
    assert.equal(needsCopy({ size: 1, mtimeMs: t - 5_000 }, { size: 1, mtimeMs: t }, "download", rules), true);
    assert.equal(needsCopy({ size: 1, mtimeMs: t }, { size: 1, mtimeMs: t }, "download", rules), false);
  });

  it("compares at whole seconds (S3 keeps LastModified to the second)", () => {
    assert.equal(needsCopy({ size: 1, mtimeMs: t + 400 }, { size: 1, mtimeMs: t }, "download", rules), false);
  });

  it("--size-only ignores times", () => {
    assert.equal(needsCopy({ size: 1, mtimeMs: t + 60_000 }, { size: 1, mtimeMs: t }, "upload", { ...rules, sizeOnly: true }), false);
  });

  it("--exact-timestamps copies a download whose times differ either way", () => {
    const exact = { ...rules, exactTimestamps: true };
    assert.equal(needsCopy({ size: 1, mtimeMs: t - 5_000 }, { size: 1, mtimeMs: t }, "download", exact), true);
    assert.equal(needsCopy({ size: 1, mtimeMs: t }, { size: 1, mtimeMs: t }, "download", exact), false);
  });
});
