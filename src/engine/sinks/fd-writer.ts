import { write as fsWrite } from "node:fs";
import type { Writable } from "node:stream";
import type { ByteWriter } from "./ordered-writer.js";

/**
 * Writes to a file descriptor (stdout) from libuv's thread pool rather than
 * through process.stdout: Node makes stdout pipes blocking on Linux, and a
 * slow reader would then freeze the event loop, starving every download and
 * tripping stall timeouts. Here only one pool thread waits for the reader.
 *
 * A descriptor in non-blocking mode (set so by the parent, or by Node once
 * something opened process.stdout) answers EAGAIN whenever the pipe is full;
 * the writer then hands the rest to a Node stream over the same descriptor,
 * whose libuv handle waits for the reader properly instead of polling.
 */
export class FdWriter implements ByteWriter {
  private stream: Writable | undefined;
  /** The stream's error, once it failed (EPIPE when the reader went away). */
  private failure: Error | undefined;

  constructor(
    private readonly fd: number,
    private readonly openStream?: () => Writable,
  ) {}

  async write(data: Buffer): Promise<void> {
    let done = 0;
    while (done < data.length) {
      if (this.failure) throw this.failure;
      if (this.stream) return writeToStream(this.stream, data.subarray(done));
      try {
        done += await writeOnce(this.fd, data, done, data.length - done);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN" || !this.openStream) throw err;
        this.stream = this.openStream();
        // A failed write reaches its callback and is then emitted as 'error' as
        // well, a tick later: without a listener for good, that second report
        // (EPIPE from `| head`) would crash the process instead of ending it quietly.
        this.stream.on("error", (error: Error) => (this.failure ??= error));
      }
    }
  }

  async end(): Promise<void> {}
}

function writeToStream(stream: Writable, data: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    stream.write(data, (err) => (err ? reject(err) : resolve()));
  });
}

function writeOnce(fd: number, data: Buffer, offset: number, length: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    fsWrite(fd, data, offset, length, null, (err, written) => (err ? reject(err) : resolve(written)));
  });
}
