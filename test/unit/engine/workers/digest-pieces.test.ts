import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { checksumValue, compositeChecksum, digestOf, fullObjectDigest } from "../../../../src/engine/integrity/checksums.js";
import { RangeVerifier, type StoredChecksum } from "../../../../src/engine/integrity/verifier.js";
import { digestPieces } from "../../../../src/engine/workers/digest-pieces.js";

const PART = 64 * 1024;
const SLICE = 20_000;

/**
 * A range written by a worker thread is checked from the CRC pieces the worker
 * sends (digestPieces, per slice, cut at part boundaries) and
 * RangeVerifier.addDigest: the verdict must be the one the bytes give,
 * including when a hedged duplicate re-sends pieces the original already did.
 */
describe("engine/workers/digest-pieces: checksums taken in a worker thread", () => {
  const data = randomBytes(3 * PART + 777);

  async function piecesOf(verifier: RangeVerifier, from: number, to: number): Promise<void> {
    const plan = verifier.digestPlan()!;
    for (let at = from; at < to; at += SLICE) {
      const slice = data.subarray(at, Math.min(to, at + SLICE));
      for (const piece of await digestPieces(plan, at, slice)) verifier.addDigest(piece.offset, piece.length, piece.digest);
    }
  }

  it("COMPOSITE CRC32C from slices of ranges in any order: ok; a flipped byte: mismatch", async () => {
    const parts: Buffer[] = [];
    for (let o = 0; o < data.length; o += PART) parts.push(await digestOf("CRC32C", data.subarray(o, o + PART)));
    const stored: StoredChecksum = { type: "COMPOSITE", checksum: { algorithm: "CRC32C", base64: await compositeChecksum("CRC32C", parts) }, partSize: PART, parts: 4 };
    const v = new RangeVerifier(stored, data.length);
    assert.deepEqual(v.digestPlan(), { algorithm: "CRC32C", pieceBoundary: PART });
    // Two ranges, the second first, and a duplicate of part of the second (a hedge) with the same slice grid.
    await piecesOf(v, 100_000, data.length);
    await piecesOf(v, 0, 100_000);
    await piecesOf(v, 140_000, data.length);
    assert.deepEqual(await v.verdict(), { ok: true });

    const bad = new RangeVerifier(stored, data.length);
    const plan = bad.digestPlan()!;
    const flipped = Buffer.from(data);
    flipped[PART + 3]! ^= 1;
    for (const piece of await digestPieces(plan, 0, flipped)) bad.addDigest(piece.offset, piece.length, piece.digest);
    assert.equal((await bad.verdict()).ok, false);
  });

  it("FULL_OBJECT CRC64NVME from slices: ok", async () => {
    const whole = checksumValue("CRC64NVME", await fullObjectDigest("CRC64NVME", [{ offset: 0, length: data.length, digest: await digestOf("CRC64NVME", data) }], data.length));
    const v = new RangeVerifier({ type: "FULL_OBJECT", checksum: whole }, data.length);
    assert.deepEqual(v.digestPlan(), { algorithm: "CRC64NVME", pieceBoundary: undefined });
    await piecesOf(v, 0, data.length);
    assert.deepEqual(await v.verdict(), { ok: true });
  });

  it("a SHA-256 has no plan: it cannot be combined from pieces (such objects stay on the main thread)", () => {
    const v = new RangeVerifier({ type: "FULL_OBJECT", checksum: { algorithm: "SHA256", base64: "x" } }, data.length);
    assert.equal(v.digestPlan(), undefined);
  });
});
