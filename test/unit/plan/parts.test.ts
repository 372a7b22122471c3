import assert from "node:assert/strict";
import {
  GiB,
  MiB,
  TiB,
  MAX_PARTS,
  PlanError,
  downloadPartSize,
  formatSize,
  parseSize,
  partAt,
  planParts,
  streamPartSize,
  streamedObjectPartSize,
  uploadPartSize,
} from "../../../src/plan/parts.js";

describe("plan/parts", () => {
  describe("uploadPartSize", () => {
    it("uses 8 MiB parts by default", () => {
      assert.equal(uploadPartSize(0), 8 * MiB);
      assert.equal(uploadPartSize(5 * MiB), 8 * MiB);
      assert.equal(uploadPartSize(1 * GiB), 8 * MiB);
    });

    it("keeps 8 MiB while the object fits in 10,000 parts (~78 GiB)", () => {
      assert.equal(uploadPartSize(10_000 * 8 * MiB), 8 * MiB);
    });

    it("grows the part size so 80 GiB needs at most 10,000 parts", () => {
      const size = uploadPartSize(80 * GiB);
      assert.ok(size > 8 * MiB);
      assert.ok(Math.ceil((80 * GiB) / size) <= MAX_PARTS);
      assert.equal(size % MiB, 0, "whole MiB");
      assert.equal(size, 9 * MiB);
    });

    it("fits the 5 TiB maximum object in 10,000 parts", () => {
      const size = uploadPartSize(5 * TiB);
      assert.ok(Math.ceil((5 * TiB) / size) <= MAX_PARTS);
      assert.equal(size, 525 * MiB);
    });

    it("refuses objects above 5 TiB", () => {
      assert.throws(() => uploadPartSize(5 * TiB + 1), PlanError);
    });

    it("honours --part-size within S3's limits", () => {
      assert.equal(uploadPartSize(1 * GiB, 64 * MiB), 64 * MiB);
      assert.equal(uploadPartSize(1 * GiB, 5 * MiB), 5 * MiB);
      assert.throws(() => uploadPartSize(1 * GiB, 5 * MiB - 1), /below S3's minimum part size of 5 MiB/);
      assert.throws(() => uploadPartSize(1 * GiB, 5 * GiB + 1), /above S3's maximum part size of 5 GiB/);
      assert.throws(() => uploadPartSize(100 * GiB, 5 * MiB), /20480 parts; S3 allows 10,000 \(use at least 11 MiB\)/);
    });
  });

  describe("planParts / partAt", () => {
    it("has no parts for an empty object", () => {
      assert.equal(planParts(0, 8 * MiB).count, 0);
    });

    it("has one part for exactly one part size, two for one byte more", () => {
      assert.equal(planParts(8 * MiB, 8 * MiB).count, 1);
      const plan = planParts(8 * MiB + 1, 8 * MiB);
      assert.equal(plan.count, 2);
      assert.deepEqual(partAt(plan, 1), { number: 2, offset: 8 * MiB, length: 1 });
    });

    it("covers every byte exactly once", () => {
      const plan = planParts(100 * MiB + 12345, 7 * MiB);
      let next = 0;
      for (let i = 0; i < plan.count; i++) {
        const part = partAt(plan, i);
        assert.equal(part.offset, next);
        assert.equal(part.number, i + 1);
        assert.ok(part.length > 0 && part.length <= plan.partSize);
        next += part.length;
      }
      assert.equal(next, 100 * MiB + 12345);
    });
  });

  describe("streamedObjectPartSize", () => {
    it("fetches an object of up to two parts whole, a larger one in parts of the given size", () => {
      assert.equal(streamedObjectPartSize(16 * MiB, 8 * MiB), 16 * MiB);
      assert.equal(streamedObjectPartSize(9 * MiB, 8 * MiB), 9 * MiB);
      assert.equal(streamedObjectPartSize(100, 8 * MiB), 100);
      assert.equal(streamedObjectPartSize(16 * MiB + 1, 8 * MiB), 8 * MiB);
      assert.equal(streamedObjectPartSize(0, 8 * MiB), 1, "an empty object still has a positive part size");
    });
  });

  describe("streamPartSize", () => {
    it("starts at the base size and doubles every 1,000 parts", () => {
      assert.equal(streamPartSize(1), 8 * MiB);
      assert.equal(streamPartSize(1000), 8 * MiB);
      assert.equal(streamPartSize(1001), 16 * MiB);
      assert.equal(streamPartSize(10_000), 4 * GiB);
    });

    it("lets a stream of unknown length reach S3's 5 TiB limit within 10,000 parts", () => {
      let total = 0;
      for (let n = 1; n <= MAX_PARTS; n++) total += streamPartSize(n);
      assert.ok(total >= 5 * TiB, `only ${formatSize(total)}`);
    });

    it("never exceeds 5 GiB", () => {
      assert.equal(streamPartSize(10_000, 64 * MiB), 5 * GiB);
    });
  });

  describe("downloadPartSize", () => {
    it("defaults to 8 MiB and rejects tiny ranges", () => {
      assert.equal(downloadPartSize(), 8 * MiB);
      assert.equal(downloadPartSize(2 * MiB), 2 * MiB);
      assert.throws(() => downloadPartSize(1000), PlanError);
    });
  });

  describe("parseSize / formatSize", () => {
    it("reads binary units the way aws-cli does", () => {
      assert.equal(parseSize("8MiB"), 8 * MiB);
      assert.equal(parseSize("8MB"), 8 * MiB);
      assert.equal(parseSize("16m"), 16 * MiB);
      assert.equal(parseSize("1GiB"), GiB);
      assert.equal(parseSize("1.5K"), 1536);
      assert.equal(parseSize("5242880"), 5 * MiB);
      assert.throws(() => parseSize("lots"), /cannot read size "lots"/);
    });

    it("prints sizes for people", () => {
      assert.equal(formatSize(0), "0 B");
      assert.equal(formatSize(1536), "1.5 KiB");
      assert.equal(formatSize(8 * MiB), "8 MiB");
      assert.equal(formatSize(5 * TiB), "5 TiB");
    });
  });
});
