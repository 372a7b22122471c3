/**
 * Pure arithmetic of S3 parts: how big, how many, where each one starts.
 * Nothing here does I/O, so every limit is unit-tested in isolation.
 */

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;
export const TiB = 1024 * GiB;

/** S3's multipart limits. */
export const MIN_PART_SIZE = 5 * MiB;
export const MAX_PART_SIZE = 5 * GiB;
export const MAX_PARTS = 10_000;
export const MAX_OBJECT_SIZE = 5 * TiB;
/** CopyObject copies at most this much in one request. */
export const MAX_SINGLE_COPY_SIZE = 5 * GiB;

/** The aws-cli and CRT default for both the multipart threshold and the part size. */
export const DEFAULT_PART_SIZE = 8 * MiB;

/** Raised when a request cannot be satisfied within S3's limits. */
export class PlanError extends Error {
  readonly code = "S3X_PLAN";
}

/** One part: its 1-based S3 part number, byte offset and length. */
export interface Part {
  number: number;
  offset: number;
  length: number;
}

/** An object cut into equal parts (the last one shorter). */
export interface PartPlan {
  objectSize: number;
  partSize: number;
  count: number;
}

export function planParts(objectSize: number, partSize: number): PartPlan {
  if (partSize <= 0) throw new PlanError(`part size must be positive, got ${partSize}`);
  return { objectSize, partSize, count: objectSize === 0 ? 0 : Math.ceil(objectSize / partSize) };
}

/** Part `index` (0-based) of a plan. */
export function partAt(plan: PartPlan, index: number): Part {
  const offset = index * plan.partSize;
  return { number: index + 1, offset, length: Math.min(plan.partSize, plan.objectSize - offset) };
}

/**
 * The part size for a multipart upload (or copy) of `objectSize` bytes:
 * the requested size (default 8 MiB), raised just enough that the object
 * fits in 10,000 parts, rounded up to a whole MiB.
 */
export function uploadPartSize(objectSize: number, requested?: number): number {
  if (objectSize > MAX_OBJECT_SIZE) {
    throw new PlanError(`object of ${objectSize} bytes exceeds S3's maximum object size of 5 TiB`);
  }
  if (requested !== undefined) {
    if (requested < MIN_PART_SIZE) throw new PlanError(`--part-size ${formatSize(requested)} is below S3's minimum part size of 5 MiB`);
    if (requested > MAX_PART_SIZE) throw new PlanError(`--part-size ${formatSize(requested)} is above S3's maximum part size of 5 GiB`);
    if (Math.ceil(objectSize / requested) > MAX_PARTS) {
      throw new PlanError(
        `--part-size ${formatSize(requested)} would cut ${formatSize(objectSize)} into ${Math.ceil(objectSize / requested)} parts; S3 allows 10,000 (use at least ${formatSize(minimumPartSize(objectSize))})`,
      );
    }
    return requested;
  }
  return Math.max(DEFAULT_PART_SIZE, minimumPartSize(objectSize));
}

/** Smallest whole-MiB part size that fits `objectSize` in 10,000 parts. */
function minimumPartSize(objectSize: number): number {
  return Math.max(MIN_PART_SIZE, Math.ceil(objectSize / MAX_PARTS / MiB) * MiB);
}

/**
 * Part sizes for a stream of unknown length. Parts must be at least 5 MiB
 * (but the last) and at most 10,000 of them; since the total is unknown the
 * size doubles every 1,000 parts, so 8 MiB parts reach ~8 TiB before part
 * 10,000 — beyond S3's 5 TiB object limit — while small streams keep small
 * parts and little memory.
 */
export function streamPartSize(partNumber: number, baseSize: number = DEFAULT_PART_SIZE): number {
  const doublings = Math.floor((partNumber - 1) / 1000);
  return Math.min(MAX_PART_SIZE, baseSize * 2 ** doublings);
}

/**
 * The part size a download of an object of `objectSize` bytes uses inside a
 * stream of many objects (`cat s3://bucket/prefix/`): an object of up to two
 * parts comes in one whole-object GET. Ranged, it would take two GETs and a
 * HEAD for its stored checksum (S3 returns that only with a whole-object
 * read). The stream needs no parallelism within such an object: the next
 * objects download meanwhile. (rclone fetches objects below 250 MiB whole.)
 */
export function streamedObjectPartSize(objectSize: number, partSize: number): number {
  return objectSize <= WHOLE_STREAMED_PARTS * partSize ? Math.max(objectSize, 1) : partSize;
}

/** How many parts' worth an object in a stream may be and still come whole (streamedObjectPartSize). */
export const WHOLE_STREAMED_PARTS = 2;

/** Part size of a ranged download: the requested size, or 8 MiB. */
export function downloadPartSize(requested?: number): number {
  if (requested !== undefined && requested < 1 * MiB) throw new PlanError(`--part-size ${formatSize(requested)} is too small for a download (minimum 1 MiB)`);
  return requested ?? DEFAULT_PART_SIZE;
}

/** Parses "8MiB", "16MB", "1G", "5242880" into bytes (binary units, as aws-cli). */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$/i.exec(text);
  if (!match) throw new PlanError(`cannot read size "${text}" (examples: 8MiB, 64M, 1GiB, 5242880)`);
  const units: Record<string, number> = { "": 1, k: KiB, m: MiB, g: GiB, t: TiB };
  const bytes = Number(match[1]) * units[match[2].toLowerCase()];
  if (!Number.isSafeInteger(Math.round(bytes))) throw new PlanError(`size "${text}" is too large`);
  return Math.round(bytes);
}

export function formatSize(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value >= 100 || Number.isInteger(value) ? 0 : 1)} ${units[unit]}`;
}
