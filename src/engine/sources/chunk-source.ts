/**
 * A sequential source of bytes (stdin, a pipe) that fills caller-provided
 * buffers: the upload engine hands it a part buffer and gets back how many
 * bytes landed there, fewer only at the end of the stream.
 */
export interface ChunkSource {
  fill(target: Buffer): Promise<number>;
}
