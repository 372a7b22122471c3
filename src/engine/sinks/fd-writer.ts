import { write as fsWrite } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { ByteWriter } from "./ordered-writer.js";

/**
 * Writes to a file descriptor (stdout) from libuv's thread pool rather than
 * through process.stdout: Node makes stdout pipes blocking on Linux, and a
 * slow reader would then freeze the event loop, starving every download and
 * tripping stall timeouts. Here only one pool thread waits for the reader.
 */
export class FdWriter implements ByteWriter {
  constructor(private readonly fd: number) {}

  async write(data: Buffer): Promise<void> {
    let done = 0;
    let idle = 1;
    while (done < data.length) {
      try {
        done += await writeOnce(this.fd, data, done, data.length - done);
        idle = 1;
      } catch (err) {
        // A descriptor inherited in non-blocking mode: wait for the reader.
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
        await sleep(idle);
        idle = Math.min(idle * 2, 50);
      }
    }
  }

  async end(): Promise<void> {}
}

function writeOnce(fd: number, data: Buffer, offset: number, length: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    fsWrite(fd, data, offset, length, null, (err, written) => (err ? reject(err) : resolve(written)));
  });
}
