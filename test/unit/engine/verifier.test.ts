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

  it("streamRange: a range fed in slices, in order, gets the verdict `add` gives the whole range", async () => {
    /** Feeds `data` in ranges of `range` bytes, each in slices of `slice` bytes. */
    async function stream(v: RangeVerifier, range: number, slice: number): Promise<void> {
      for (let o = 0; o < data.length; o += range) {
        const s = v.streamRange(o);
        const bytes = data.subarray(o, o + range);
        for (let at = 0; at < bytes.length; at += slice) await s.add(bytes.subarray(at, at + slice));
        s.end();
      }
    }
    const crcStored = { type: "COMPOSITE" as const, checksum: { algorithm: "CRC32C" as const, base64: await composite("CRC32C", data) }, partSize: PART, parts: 4 };
    const crc = new RangeVerifier(crcStored, data.length);
    await stream(crc, 100_000, 7_777);
    assert.deepEqual(await crc.verdict(), { ok: true });

    const shaStored = { type: "COMPOSITE" as const, checksum: { algorithm: "SHA256" as const, base64: await composite("SHA256", data) }, partSize: PART, parts: 4 };
    for (const range of [PART, 2 * PART]) {
      const sha = new RangeVerifier(shaStored, data.length);
      await stream(sha, range, 10_000); // slices cross part boundaries: the running hash is cut there
      assert.deepEqual(await sha.verdict(), { ok: true }, `ranges of ${range}`);
    }
    const cut = new RangeVerifier(shaStored, data.length);
    await stream(cut, 50_000, 10_000);
    assert.equal((await cut.verdict()).ok, "unverifiable");

    const bad = Buffer.from(data);
    bad[2 * PART + 3]! ^= 1;
    const flipped = new RangeVerifier(shaStored, data.length);
    for (let o = 0; o < bad.length; o += PART) {
      const s = flipped.streamRange(o);
      await s.add(bad.subarray(o, o + 1000));
      await s.add(bad.subarray(o + 1000, o + PART));
      s.end();
    }
    assert.equal((await flipped.verdict()).ok, false);

    const fullSha = new RangeVerifier({ type: "FULL_OBJECT", checksum: { algorithm: "SHA256", base64: (await digestOf("SHA256", data)).toString("base64") } }, data.length);
    await stream(fullSha, data.length, 30_000);
    assert.deepEqual(await fullSha.verdict(), { ok: true }, "one range in slices: the whole object's SHA-256");
  });
});
