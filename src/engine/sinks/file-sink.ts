import { open, rename, unlink, utimes, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import type { DownloadSink } from "./download-sink.js";

/**
 * Writes parts at their offsets into a temporary file beside the destination
 * and renames it over the destination only when every byte has arrived, so a
 * failed or interrupted download never leaves a half-written file under the
 * final name (and a rename within one directory is atomic).
 */
export class FileSink implements DownloadSink {
  readonly tempPath: string;
  private handle: FileHandle | undefined;
  private closed = false;

  constructor(readonly finalPath: string) {
    this.tempPath = join(dirname(finalPath), `.${basename(finalPath)}.s3x-${randomBytes(4).toString("hex")}.part`);
  }

  async open(size: number): Promise<void> {
    // "wx": never clobber an existing file that happens to have this name.
    this.handle = await open(this.tempPath, "wx", 0o644);
    // Size the file up front: positional writes then never extend it.
    if (size > 0) await this.handle.truncate(size);
  }

  async write(_index: number, offset: number, data: Buffer): Promise<void> {
    const handle = this.handle;
    if (!handle) throw new Error("FileSink.write before open");
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await handle.write(data, done, data.length - done, offset + done);
      done += bytesWritten;
    }
  }

  async commit(info: { lastModified?: Date }): Promise<void> {
    await this.close();
    if (info.lastModified) await utimes(this.tempPath, info.lastModified, info.lastModified);
    try {
      await rename(this.tempPath, this.finalPath);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") {
        throw Object.assign(new Error(`${this.finalPath}: a directory of the same name is in the way (the key clashes with a prefix)`), { code: "S3X_PATH_CLASH" });
      }
      throw err;
    }
  }

  async discard(): Promise<void> {
    await this.close().catch(() => undefined);
    await unlink(this.tempPath).catch(() => undefined);
  }

  private async close(): Promise<void> {
    if (this.closed || !this.handle) return;
    this.closed = true;
    await this.handle.close();
  }
}
