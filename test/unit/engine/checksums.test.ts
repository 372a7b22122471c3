import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "mocha";
import {
  combineDigests,
  compositeChecksum,
  digestOf,
  fullObjectDigest,
  parseChecksumAlgorithm,
  type ChecksumAlgorithm,
  type RangeDigest,
} from "../../../src/engine/integrity/checksums.js";

const NINE = Buffer.from("123456789");

describe("checksums", () => {
  it("match the published check values for \"123456789\"", async () => {
    assert.equal((await digestOf("CRC32C", NINE)).toString("hex"), "e3069283");
    assert.equal((await digestOf("CRC32", NINE)).toString("hex"), "cbf43926");
    assert.equal((await digestOf("CRC64NVME", NINE)).toString("hex"), "ae8b14860a799888");
    assert.equal(
      (await digestOf("SHA256", NINE)).toString("hex"),
      "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225",
    );
  });

  it("use S3's header encoding: base64 of the big-endian digest", async () => {
    // The CRC32C of "123456789" as S3 shows it in x-amz-checksum-crc32c.
    assert.equal((await digestOf("CRC32C", NINE)).toString("base64"), "4waSgw==");
  });

  for (const algorithm of ["CRC32C", "CRC32", "CRC64NVME"] as ChecksumAlgorithm[]) {
    it(`${algorithm}: combining two halves equals the checksum of the whole, at any split`, async () => {
      const data = randomBytes(70_001);
      const whole = await digestOf(algorithm, data);
      for (const split of [0, 1, 8, 4096, 35_000, 69_999, 70_001]) {
        const a = await digestOf(algorithm, data.subarray(0, split));
        const b = await digestOf(algorithm, data.subarray(split));
        assert.deepEqual(combineDigests(algorithm, a, b, data.length - split), whole, `split at ${split}`);
      }
    });

    it(`${algorithm}: a full-object value from parts that finished out of order`, async () => {
      const partSize = 5 * 1024 * 1024;
      const data = randomBytes(3 * partSize + 12_345);
      const ranges: RangeDigest[] = [];
      for (let offset = 0; offset < data.length; offset += partSize) {
        const part = data.subarray(offset, Math.min(data.length, offset + partSize));
        ranges.push({ offset, length: part.length, digest: await digestOf(algorithm, part) });
      }
      ranges.reverse();
      assert.deepEqual(await fullObjectDigest(algorithm, ranges, data.length), await digestOf(algorithm, data));
    });
  }

  it("refuses ranges that leave a gap or do not reach the end", async () => {
    const d = await digestOf("CRC32C", NINE);
    await assert.rejects(fullObjectDigest("CRC32C", [{ offset: 1, length: 9, digest: d }], 10), /expected offset 0/);
    await assert.rejects(fullObjectDigest("CRC32C", [{ offset: 0, length: 9, digest: d }], 10), /cover 9 of 10/);
  });

  it("SHA256 cannot be combined; its multipart value is S3's composite", async () => {
    const a = await digestOf("SHA256", Buffer.from("a"));
    assert.throws(() => combineDigests("SHA256", a, a, 1), /cannot be combined/);
    const b = await digestOf("SHA256", Buffer.from("b"));
    const expected = (await digestOf("SHA256", Buffer.concat([a, b]))).toString("base64") + "-2";
    assert.equal(await compositeChecksum("SHA256", [a, b]), expected);
  });

  it("parses algorithm names the way users type them", () => {
    assert.equal(parseChecksumAlgorithm("crc32c"), "CRC32C");
    assert.equal(parseChecksumAlgorithm("CRC64-NVME"), "CRC64NVME");
    assert.equal(parseChecksumAlgorithm("none"), "none");
    assert.throws(() => parseChecksumAlgorithm("md5"), /unknown checksum algorithm "md5"/);
  });
});
