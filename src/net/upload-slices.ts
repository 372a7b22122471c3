/** Large request bodies go out in slices of this size, on either transport. */
export const UPLOAD_SLICE_BYTES = 512 * 1024;

/**
 * Whether a request body is sent (and counted) slice by slice: bodies of at
 * least two slices; smaller ones go out with the head in one write.
 */
export function sentInSlices(bytes: number): boolean {
  return bytes >= UPLOAD_SLICE_BYTES * 2;
}

/** Bytes of a request body given as bytes or a string; 0 for a stream (its length is not known here). */
export function bodyLength(body: unknown): number {
  if (typeof body === "string") return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return 0;
}
