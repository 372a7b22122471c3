/** A byte range [offset, offset + length). */
export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * The ranges of [0, size) not covered by `done`, cut into pieces of at most
 * `partSize` bytes: what a resumed download still has to fetch. `done` may
 * be unsorted and overlap (a range written twice by two interrupted runs).
 */
export function missingRanges(done: readonly ByteRange[], size: number, partSize: number): ByteRange[] {
  if (partSize <= 0) throw new Error(`part size must be positive, got ${partSize}`);
  const sorted = done.filter((r) => r.length > 0).sort((a, b) => a.offset - b.offset);
  const gaps: ByteRange[] = [];
  let covered = 0;
  for (const r of sorted) {
    if (r.offset > covered) gaps.push({ offset: covered, length: Math.min(r.offset, size) - covered });
    covered = Math.max(covered, r.offset + r.length);
    if (covered >= size) break;
  }
  if (covered < size) gaps.push({ offset: covered, length: size - covered });
  const pieces: ByteRange[] = [];
  for (const gap of gaps) {
    for (let offset = gap.offset; offset < gap.offset + gap.length; offset += partSize) {
      pieces.push({ offset, length: Math.min(partSize, gap.offset + gap.length - offset) });
    }
  }
  return pieces;
}

/** Bytes covered by `ranges` (overlaps counted once). */
export function coveredBytes(ranges: readonly ByteRange[]): number {
  const sorted = [...ranges].sort((a, b) => a.offset - b.offset);
  let total = 0;
  let end = 0;
  for (const r of sorted) {
    const start = Math.max(r.offset, end);
    const stop = r.offset + r.length;
    if (stop > start) total += stop - start;
    end = Math.max(end, stop);
  }
  return total;
}
