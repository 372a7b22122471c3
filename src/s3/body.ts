/**
 * A response body read to its end, whatever shape the request handler gave
 * it (bytes, or a stream of chunks; none at all is empty). For S3's XML
 * answers, which are small; reading to the end also frees the connection.
 */
export async function readAll(body: unknown): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const chunks: Buffer[] = [];
  // Copied chunk by chunk: a stream may hand out views of a buffer it reuses.
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
