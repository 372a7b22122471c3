/**
 * CRC combination: the CRC of A‖B from crc(A), crc(B) and the length of B,
 * without touching the bytes again. This is how a multipart upload gets its
 * full-object checksum from the part checksums computed while sending, and
 * how a ranged download checks the whole object from its ranges.
 *
 * The three CRCs S3 uses (CRC32, CRC32C, CRC64NVME) are all reflected, start
 * from all ones and end with an all-ones XOR; for those, appending B shifts
 * crc(A) by len(B) zero bytes (a multiplication by x^(8·len) modulo the
 * polynomial) and XORs crc(B). The arithmetic is on reflected polynomials
 * (bit width-1 is x^0), in BigInt so one routine serves 32 and 64 bits; it
 * runs once per part, so speed does not matter here.
 */
export interface CrcSpec {
  width: 32 | 64;
  /** The polynomial, bit-reversed (as table-driven reflected CRCs use it). */
  reflectedPoly: bigint;
}

export const CRC32_SPEC: CrcSpec = { width: 32, reflectedPoly: 0xedb88320n };
export const CRC32C_SPEC: CrcSpec = { width: 32, reflectedPoly: 0x82f63b78n };
export const CRC64NVME_SPEC: CrcSpec = { width: 64, reflectedPoly: 0x9a6c9329ac4bc9b5n };

/** a·b mod p, both reflected. */
function multiplyModP(spec: CrcSpec, a: bigint, b: bigint): bigint {
  let mask = 1n << BigInt(spec.width - 1);
  let product = 0n;
  while (mask !== 0n) {
    if (a & mask) {
      product ^= b;
      if ((a & (mask - 1n)) === 0n) break;
    }
    mask >>= 1n;
    b = b & 1n ? (b >> 1n) ^ spec.reflectedPoly : b >> 1n;
  }
  return product;
}

/**
 * Powers x^(2^k) mod p for k = 0…66, computed once per spec: lengths below
 * 2^64 bytes need k up to 3 + 63. (zlib wraps k modulo 32, which relies on
 * x^(2^32) = x; a plain longer table needs no such property.)
 */
const POWER_COUNT = 67;
const powerTables = new WeakMap<CrcSpec, bigint[]>();

function powers(spec: CrcSpec): bigint[] {
  let table = powerTables.get(spec);
  if (table) return table;
  table = [1n << BigInt(spec.width - 2)]; // x^1
  for (let k = 1; k < POWER_COUNT; k++) table.push(multiplyModP(spec, table[k - 1]!, table[k - 1]!));
  powerTables.set(spec, table);
  return table;
}

/** x^(8·bytes) mod p. */
function shiftOperator(spec: CrcSpec, bytes: number): bigint {
  const table = powers(spec);
  let result = 1n << BigInt(spec.width - 1); // x^0
  let n = BigInt(bytes);
  let k = 3; // 8 = 2^3: one byte is x^8
  while (n > 0n) {
    if (n & 1n) result = multiplyModP(spec, table[k]!, result);
    n >>= 1n;
    k++;
  }
  return result;
}

/** crc(A‖B) from crc(A), crc(B) and len(B). */
export function combineCrc(spec: CrcSpec, crcA: bigint, crcB: bigint, lengthB: number): bigint {
  if (lengthB === 0) return crcA;
  return multiplyModP(spec, shiftOperator(spec, lengthB), crcA) ^ crcB;
}
