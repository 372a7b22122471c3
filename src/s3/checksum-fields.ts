/** The checksum fields of S3 requests and answers: S3's names and the x-amz-checksum-* headers. */

/** The additional checksums S3 stores (x-amz-checksum-*), by S3's names. */
export type ChecksumAlgorithm = "CRC32" | "CRC32C" | "CRC64NVME" | "SHA256";

/** FULL_OBJECT: a CRC of all the bytes; COMPOSITE: a checksum of the part checksums, "-N". */
export type ChecksumType = "FULL_OBJECT" | "COMPOSITE";

/** A checksum as S3 carries it in headers and XML: base64 of the big-endian digest. */
export interface ChecksumValue {
  algorithm: ChecksumAlgorithm;
  base64: string;
}

const ALGORITHMS: readonly ChecksumAlgorithm[] = ["CRC32", "CRC32C", "CRC64NVME", "SHA256"];

/**
 * The checksum an answer carries, if any (only one algorithm is stored per
 * object), read by `valueOf` from headers or XML, and its type.
 */
export function checksumFrom(valueOf: (algorithm: ChecksumAlgorithm) => string | undefined, typeText?: string): { checksum?: ChecksumValue; checksumType?: ChecksumType } {
  for (const algorithm of ALGORITHMS) {
    const base64 = valueOf(algorithm);
    if (base64) {
      const type = typeText === "FULL_OBJECT" || typeText === "COMPOSITE" ? typeText : undefined;
      // Without a type, a value with "-N" is a multipart composite; otherwise it covers the whole object.
      return { checksum: { algorithm, base64 }, checksumType: type ?? (/-\d+$/.test(base64) ? "COMPOSITE" : "FULL_OBJECT") };
    }
  }
  return {};
}

/** The checksum named by a response's x-amz-checksum-* headers (lower-case names), and its type. */
export function checksumFromHeaders(headers: Record<string, string>): { checksum?: ChecksumValue; checksumType?: ChecksumType } {
  return checksumFrom((algorithm) => headers[`x-amz-checksum-${algorithm.toLowerCase()}`], headers["x-amz-checksum-type"]);
}

/** The header that carries a PUT's checksum for the server to check. */
export function addChecksumHeader(headers: Record<string, string>, checksum: ChecksumValue | undefined): void {
  if (checksum) headers[`x-amz-checksum-${checksum.algorithm.toLowerCase()}`] = checksum.base64;
}

/** What a PUT or UploadPart asks of its answer's checksum: `echoed` hears the value the server sent back, if any. */
export interface ChecksumCall {
  checksum?: ChecksumValue;
  /**
   * Called with the checksum the server echoed (AWS returns the value it
   * checked; a server that ignores x-amz-checksum-* returns none): how an
   * uploader learns whether its checksum was checked at all.
   */
  echoed?: (value: ChecksumValue | undefined) => void;
  /**
   * The server has shown it verifies `checksum` (an earlier answer echoed
   * one): under --payload-signing auto the body is then not hashed into the
   * signature over plain HTTP either (s3/payload-signing.ts).
   */
  checksumChecked?: boolean;
}

export interface MultipartChecksum {
  algorithm: ChecksumAlgorithm;
  type: ChecksumType;
}
