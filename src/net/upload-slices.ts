/** Large request bodies go out in slices of this size. */
export const UPLOAD_SLICE_BYTES = 512 * 1024;

/**
 * Whether a request body is sent (and counted) slice by slice: bodies of at
 * least two slices; smaller ones go out with the head in one write.
 */
export function sentInSlices(bytes: number): boolean {
  return bytes >= UPLOAD_SLICE_BYTES * 2;
}
