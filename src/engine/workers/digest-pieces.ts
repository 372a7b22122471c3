import { digestOf } from "../integrity/checksums.js";
import type { DigestPiece, DigestPlan } from "./protocol.js";

/**
 * The digests of `data` (the object's bytes from `offset` on), cut at the
 * plan's piece boundaries: what a worker hands back for RangeVerifier.addDigest,
 * the same pieces RangeVerifier.add would have taken over the bytes.
 */
export async function digestPieces(plan: DigestPlan, offset: number, data: Uint8Array): Promise<DigestPiece[]> {
  const pieces: DigestPiece[] = [];
  const end = offset + data.length;
  for (let at = offset; at < end; ) {
    const boundary = plan.pieceBoundary ? (Math.floor(at / plan.pieceBoundary) + 1) * plan.pieceBoundary : end;
    const pieceEnd = Math.min(end, boundary);
    pieces.push({ offset: at, length: pieceEnd - at, digest: await digestOf(plan.algorithm, data.subarray(at - offset, pieceEnd - offset)) });
    at = pieceEnd;
  }
  return pieces;
}
