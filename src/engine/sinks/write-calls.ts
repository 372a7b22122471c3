import { readSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { SinkFileSystem } from "./range-journal.js";

/**
 * The most one write call hands the kernel. Linux (6.x, ext4 and XFS) sizes
 * the page-cache folio it allocates by the length of the write: a 1 MiB call
 * gets large folios, which the allocator carves from high-order free blocks.
 * In a VM that reports free memory to its host (virtio-balloon free page
 * reporting, as our Firecracker machines do), exactly those blocks were given
 * back, and the first touch of every 4 KiB page traps to the host: writing
 * 1 GiB in 1 MiB calls measured 1.9–2.1 s of system CPU here, in 256 KiB
 * calls 0.31–0.35 s (64 KiB: 0.36–0.40). Elsewhere four calls instead of one
 * cost a few microseconds per MiB.
 */
export const MAX_WRITE_CALL = 256 * 1024;

export function writeCallLength(remaining: number): number {
  return Math.min(remaining, MAX_WRITE_CALL);
}

/**
 * Writes `data` at `position` with blocking calls of at most MAX_WRITE_CALL
 * bytes, telling `timed` how many microseconds each call took.
 */
export function writeBlocking(fs: SinkFileSystem, fd: number, data: Uint8Array, position: number, timed?: (micros: number) => void): void {
  let done = 0;
  while (done < data.length) {
    const started = performance.now();
    done += fs.writeSync(fd, data, done, writeCallLength(data.length - done), position + done);
    timed?.((performance.now() - started) * 1000);
  }
}

/** Reads `target.length` bytes at `position` with blocking calls (a file written so, read back to verify it). */
export function readBlocking(fd: number, target: Uint8Array, position: number, path: string): void {
  for (let filled = 0; filled < target.length; ) {
    const n = readSync(fd, target, filled, target.length - filled, position + filled);
    if (n === 0) throw new Error(`${path} is shorter than what was written`);
    filled += n;
  }
}

/** Reads `target.length` bytes at `position` through the thread pool (ranges an earlier run wrote, to verify them). */
export async function readThrough(handle: FileHandle, target: Uint8Array, position: number, path: string): Promise<void> {
  for (let filled = 0; filled < target.length; ) {
    const { bytesRead } = await handle.read(target, filled, target.length - filled, position + filled);
    if (bytesRead === 0) throw new Error(`${path} is shorter than its journal says`);
    filled += bytesRead;
  }
}
