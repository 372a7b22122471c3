import { createHash, type Hash } from "node:crypto";
import type { ChecksumAlgorithm, ChecksumValue } from "../../s3/operations.js";
import { checksumValue, combineDigests, compositeChecksum, digestOf, emptyDigest, fullObjectDigest, isCrc, type RangeDigest } from "./checksums.js";

/**
 * The checksum S3 stored for an object, in a form a download can check:
 * a FULL_OBJECT CRC covers every byte; a COMPOSITE value is the checksum of
 * the part checksums ("…-N"), checkable only when the part boundaries are
 * known (here: N parts of `partSize`, the last one shorter).
 */
export type StoredChecksum =
  | { type: "FULL_OBJECT"; checksum: ChecksumValue }
  | { type: "COMPOSITE"; checksum: ChecksumValue; partSize: number; parts: number };

export type Verdict = { ok: true } | { ok: false; actual: string } | { ok: "unverifiable"; why: string };

/**
 * Checks an object downloaded in ranges of any size and order against its
 * stored checksum. Each range's digest is taken as it lands; for a COMPOSITE
 * checksum a range is cut at part boundaries first, so with CRCs the pieces
 * of a part combine into the part's CRC whatever the download's range size.
 * SHA-256 digests cannot be combined: a COMPOSITE SHA-256 is checkable only
 * when every range is exactly one part.
 */
export class RangeVerifier {
  private readonly pieces: RangeDigest[] = [];
  private unverifiable: string | undefined;

  constructor(
    readonly stored: StoredChecksum,
    private readonly size: number,
  ) {}

  get algorithm() {
    return this.stored.checksum.algorithm;
  }

  /** A range's bytes, cut at part boundaries (COMPOSITE) into pieces digested on their own. */
  async add(offset: number, data: Uint8Array): Promise<void> {
    const end = offset + data.length;
    for (let at = offset; at < end; ) {
      // Once the verdict cannot be reached, hashing more bytes is wasted CPU.
      if (this.unverifiable) return;
      const pieceEnd = Math.min(end, this.pieceEndAfter(at));
      const problem = isCrc(this.algorithm) ? undefined : this.wholeDigestProblem(at, pieceEnd - at);
      if (problem) {
        this.unverifiable = problem;
        return;
      }
      this.pieces.push({ offset: at, length: pieceEnd - at, digest: await digestOf(this.algorithm, data.subarray(at - offset, pieceEnd - offset)) });
      at = pieceEnd;
    }
  }

  /**
   * How another thread may take this verifier's digests for it: with the
   * algorithm, over pieces cut at multiples of `pieceBoundary` (a
   * COMPOSITE checksum's part size), handed back through addDigest. None
   * for a SHA-256, which cannot be combined from pieces.
   */
  digestPlan(): { algorithm: ChecksumAlgorithm; pieceBoundary?: number } | undefined {
    if (!isCrc(this.algorithm)) return undefined;
    return { algorithm: this.algorithm, pieceBoundary: this.stored.type === "COMPOSITE" ? this.stored.partSize : undefined };
  }

  /** The digest of bytes [offset, offset + length), taken elsewhere by digestPlan's rules. */
  addDigest(offset: number, length: number, digest: Uint8Array): void {
    if (this.unverifiable) return;
    this.pieces.push({ offset, length, digest: Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength) });
  }

  /** Where the piece holding byte `position` must end: its part's end (COMPOSITE), else the object's. */
  private pieceEndAfter(position: number): number {
    const stored = this.stored;
    return stored.type === "COMPOSITE" ? Math.min(this.size, (Math.floor(position / stored.partSize) + 1) * stored.partSize) : this.size;
  }

  /** Why a digest that cannot be combined (SHA-256) of bytes [offset, offset + length) cannot be checked: it must cover a whole part (COMPOSITE) or the whole object. */
  private wholeDigestProblem(offset: number, length: number): string | undefined {
    const stored = this.stored;
    if (stored.type === "FULL_OBJECT") return length === this.size ? undefined : `a ${this.algorithm} of the whole object cannot be combined from ranges`;
    const whole = offset % stored.partSize === 0 && offset + length === this.pieceEndAfter(offset);
    return whole ? undefined : `the download's ranges do not match the object's ${stored.parts} parts (${this.algorithm} part checksums cannot be combined)`;
  }

  /**
   * Takes one range's bytes piece by piece, in order (a download that writes
   * a range in slices as they arrive). CRC pieces are added as they come; a
   * SHA-256, which cannot be combined, runs over the range and is added per
   * part (COMPOSITE) or for the whole object at the range's end: the same
   * verdict as `add` with the whole range at once.
   */
  streamRange(offset: number): RangeStream {
    let at = offset;
    if (isCrc(this.algorithm)) {
      return {
        add: (data) => {
          const pieceAt = at;
          at += data.length;
          return this.add(pieceAt, data);
        },
        end: () => undefined,
      };
    }
    let pieceStart = offset;
    let hash: Hash = createHash("sha256");
    const endPiece = (): void => {
      if (at > pieceStart) this.addWholeDigest(pieceStart, at - pieceStart, hash.digest());
      pieceStart = at;
      hash = createHash("sha256");
    };
    return {
      add: async (data) => {
        for (let taken = 0; taken < data.length; ) {
          const n = Math.min(data.length - taken, this.pieceEndAfter(at) - at);
          if (n <= 0) throw new Error(`range bytes past the object's end (${this.size} bytes)`);
          hash.update(data.subarray(taken, taken + n));
          taken += n;
          at += n;
          if (at === this.pieceEndAfter(pieceStart)) endPiece();
        }
      },
      end: endPiece,
    };
  }

  /** A SHA-256 of the bytes [offset, offset + length), taken by streamRange. */
  private addWholeDigest(offset: number, length: number, digest: Buffer): void {
    if (this.unverifiable) return;
    this.unverifiable = this.wholeDigestProblem(offset, length);
    if (!this.unverifiable) this.pieces.push({ offset, length, digest });
  }

  /** The verdict, once every byte was added. Ranges added twice count once (the latest digest). */
  async verdict(): Promise<Verdict> {
    if (this.unverifiable) return { ok: "unverifiable", why: this.unverifiable };
    const byOffset = new Map<number, RangeDigest>();
    for (const p of this.pieces) byOffset.set(p.offset, p);
    const pieces = [...byOffset.values()].sort((a, b) => a.offset - b.offset);
    const stored = this.stored;
    let actual: string;
    if (stored.type === "FULL_OBJECT" && !isCrc(this.algorithm)) {
      // A SHA-256 of a whole single-part object: `add` let through only one range holding it all.
      const only = pieces[0];
      if (!only) return { ok: "unverifiable", why: "no bytes were checked" };
      actual = only.digest.toString("base64");
    } else if (stored.type === "FULL_OBJECT") {
      actual = checksumValue(this.algorithm, await fullObjectDigest(this.algorithm, pieces, this.size)).base64;
    } else {
      const partDigests: Buffer[] = [];
      let index = 0;
      for (let part = 0; part < stored.parts; part++) {
        const start = part * stored.partSize;
        const end = Math.min(this.size, start + stored.partSize);
        let digest = await emptyDigest(this.algorithm);
        let at = start;
        while (index < pieces.length && pieces[index]!.offset < end) {
          const piece = pieces[index++]!;
          if (piece.offset !== at) throw new Error(`checksum pieces do not tile part ${part + 1}: expected offset ${at}, got ${piece.offset}`);
          digest = isCrc(this.algorithm) ? combineDigests(this.algorithm, digest, piece.digest, piece.length) : piece.digest;
          at += piece.length;
        }
        if (at !== end) throw new Error(`checksum pieces cover ${at - start} of part ${part + 1}'s ${end - start} bytes`);
        partDigests.push(digest);
      }
      actual = await compositeChecksum(this.algorithm, partDigests);
    }
    return actual === stored.checksum.base64 ? { ok: true } : { ok: false, actual };
  }
}

/** One range's bytes for a RangeVerifier, in order (see RangeVerifier.streamRange). */
export interface RangeStream {
  add(data: Uint8Array): Promise<void>;
  /** The range is complete. */
  end(): void;
}

/** The part count in a COMPOSITE value ("…-N"), or undefined. */
export function compositeParts(value: string): number | undefined {
  const match = /-(\d+)$/.exec(value);
  return match ? Number(match[1]) : undefined;
}
