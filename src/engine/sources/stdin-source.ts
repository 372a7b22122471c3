import { read as fsRead } from "node:fs";
import type { Readable } from "node:stream";
import type { ChunkSource } from "./chunk-source.js";

/**
 * Reads a file descriptor (stdin) straight into part buffers with read(2)
 * from libuv's thread pool: no intermediate 64 KiB chunks and no copies.
 * A descriptor inherited in non-blocking mode answers EAGAIN; then the
 * source falls back to a Node stream over the same descriptor.
 */
export class FdSource implements ChunkSource {
  private fallback: StreamSource | undefined;

  constructor(
    private readonly fd: number,
    private readonly openStream: () => Readable,
  ) {}

  async fill(target: Buffer): Promise<number> {
    if (this.fallback) return this.fallback.fill(target);
    let filled = 0;
    while (filled < target.length) {
      let n: number;
      try {
        n = await readOnce(this.fd, target, filled, target.length - filled);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
        this.fallback = new StreamSource(this.openStream());
        return filled + (await this.fallback.fill(target.subarray(filled)));
      }
      if (n === 0) break;
      filled += n;
    }
    return filled;
  }
}

function readOnce(fd: number, target: Buffer, offset: number, length: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    fsRead(fd, target, offset, length, null, (err, bytesRead) => (err ? reject(err) : resolve(bytesRead)));
  });
}

/** Fills buffers from any Readable, keeping the unread rest of a chunk. */
export class StreamSource implements ChunkSource {
  private readonly iterator: AsyncIterator<Buffer>;
  private leftover: Buffer | undefined;
  private done = false;

  constructor(stream: Readable) {
    this.iterator = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  }

  async fill(target: Buffer): Promise<number> {
    let filled = 0;
    while (filled < target.length) {
      let chunk = this.leftover;
      this.leftover = undefined;
      if (!chunk) {
        if (this.done) break;
        const next = await this.iterator.next();
        if (next.done) {
          this.done = true;
          break;
        }
        chunk = typeof next.value === "string" ? Buffer.from(next.value) : next.value;
      }
      const n = Math.min(chunk.length, target.length - filled);
      chunk.copy(target, filled, 0, n);
      filled += n;
      if (n < chunk.length) this.leftover = chunk.subarray(n);
    }
    return filled;
  }
}
