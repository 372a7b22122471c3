import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { compositeChecksum, digestOf, type ChecksumAlgorithm } from "../../../src/engine/integrity/checksums.js";
import { compositeParts, RangeVerifier } from "../../../src/engine/integrity/verifier.js";

const PART = 64 * 1024;

/** What S3 would store for `data` uploaded in parts of PART bytes. */
async function composite(algorithm: ChecksumAlgorithm, data: Buffer): Promise<string> {
  const digests: Buffer[] = [];
  for (let o = 0; o < data.length; o += PART) digests.push(await digestOf(algorithm, data.subarray(o, o + PART)));
  return compositeChecksum(algorithm, digests);
}

/** Feeds `data` to the verifier in ranges of `range` bytes, in reverse order. */
async function feed(v: RangeVerifier, data: Buffer, range: number): Promise<void> {
  const offsets: number[] = [];
  for (let o = 0; o < data.length; o += range) offsets.push(o);
  for (const o of offsets.reverse()) await v.add(o, data.subarray(o, o + range));
}

describe("engine/integrity/verifier", () => {
  const data = randomBytes(3 * PART + 1234);

  it("COMPOSITE CRC32C: checked from ranges cut anywhere (pieces combined per part)", async () => {
    const value = await composite("CRC32C", data);
    assert.equal(compositeParts(value), 4);
    for (const range of [PART, 50_000, 100_000, data.length]) {
      const v = new RangeVerifier({ type: "COMPOSITE", checksum: { algorithm: "CRC32C", base64: value }, partSize: PART, parts: 4 }, data.length);
      await feed(v, data, range);
      assert.deepEqual(await v.verdict(), { ok: true }, `ranges of ${range}`);
    }
  });

  it("COMPOSITE: one flipped byte is a mismatch", async () => {
    const value = await composite("CRC32C", data);
    const bad = Buffer.from(data);
    bad[PART + 7]! ^= 1;
    const v = new RangeVerifier({ type: "COMPOSITE", checksum: { algorithm: "CRC32C", base64: value }, partSize: PART, parts: 4 }, data.length);
    await feed(v, bad, 50_000);
    const verdict = await v.verdict();
    assert.equal(verdict.ok, false);
  });

  it("COMPOSITE SHA256: checked when ranges are the parts, unverifiable otherwise", async () => {
    const stored = { type: "COMPOSITE" as const, checksum: { algorithm: "SHA256" as const, base64: await composite("SHA256", data) }, partSize: PART, parts: 4 };
    const aligned = new RangeVerifier(stored, data.length);
    await feed(aligned, data, PART);
    assert.deepEqual(await aligned.verdict(), { ok: true });
    const cut = new RangeVerifier(stored, data.length);
    await feed(cut, data, 50_000);
    assert.equal((await cut.verdict()).ok, "unverifiable");
  });

  it("FULL_OBJECT: CRCs from any ranges; a SHA-256 only from one whole range", async () => {
    const crc = new RangeVerifier({ type: "FULL_OBJECT", checksum: { algorithm: "CRC64NVME", base64: (await digestOf("CRC64NVME", data)).toString("base64") } }, data.length);
    await feed(crc, data, 30_000);
    assert.deepEqual(await crc.verdict(), { ok: true });
    const sha = { type: "FULL_OBJECT" as const, checksum: { algorithm: "SHA256" as const, base64: (await digestOf("SHA256", data)).toString("base64") } };
    const whole = new RangeVerifier(sha, data.length);
    await whole.add(0, data);
    assert.deepEqual(await whole.verdict(), { ok: true });
    const ranged = new RangeVerifier(sha, data.length);
    await feed(ranged, data, 30_000);
    assert.equal((await ranged.verdict()).ok, "unverifiable");
  });
});
