import { open, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { destinationKey, formatLocation, keyBaseName, UsageError, type Location } from "../plan/location.js";
import { downloadPartSize } from "../plan/parts.js";
import type { ObjectRef } from "../s3/operations.js";
import type { TransferContext } from "./context.js";
import { copyS3Object, type CopyOptions } from "./copy.js";
import { downloadObject, type DownloadOptions } from "./download.js";
import { makeDirectories } from "./local-directories.js";
import { widenPipe } from "./pipe-size.js";
import { FdWriter } from "./sinks/fd-writer.js";
import { ReadAhead } from "./sinks/read-ahead.js";
import { FileSink } from "./sinks/file-sink.js";
import { writePolicies } from "./sinks/blocking-writes.js";
import { OrderedWriter } from "./sinks/ordered-writer.js";
import { FdSource } from "./sources/stdin-source.js";
import { uploadFile, uploadStream, type UploadOptions } from "./upload.js";

/**
 * One object, whichever way (cp without --recursive, and mv's copy): picks
 * the source or sink its ends need (a file, stdin, stdout in order, a
 * device or FIFO in place) and runs the engine's upload, download or copy.
 * The CLI hands down how to build each kind's options: they are checked only
 * for the kind that runs (a download never reads --checksum-algorithm).
 */
export interface ObjectTransferOptions {
  partSize?: number;
  /** The endpoint's identity in local resume records, and whether to resume. */
  resumable: { endpoint: string; resume: boolean };
  download: DownloadOptions;
  /**
   * An upload's options; `contentTypeFrom` names the file whose extension gives the Content-Type,
   * `mtimeMs` is that file's modification time (stored as the object's mtime metadata).
   */
  uploadOptions(contentTypeFrom?: string, mtimeMs?: number): Promise<UploadOptions>;
  /** The part size of an upload from stdin (whose size is not known in advance). */
  streamPartSize(): number;
  /** An S3→S3 copy's options, for the destination key. */
  copyOptions(destinationKey: string): Promise<CopyOptions>;
}

/** Both ends as the output names them, and the bytes moved. */
export interface ObjectTransferResult {
  source: string;
  destination: string;
  bytes: number;
}

export async function transferObject(ctx: TransferContext, source: Location, dest: Location, options: ObjectTransferOptions): Promise<ObjectTransferResult> {
  if (source.kind === "local" && dest.kind === "s3") {
    const info = await stat(source.path);
    if (info.isDirectory()) throw new UsageError(`${source.path} is a directory (use --recursive)`);
    const ref: ObjectRef = { bucket: dest.bucket, key: destinationKey(dest.key, basename(source.path)) };
    const { size } = await uploadFile(ctx, source.path, ref, { ...(await options.uploadOptions(source.path, info.mtimeMs)), resumable: options.resumable });
    return { source: source.path, destination: formatLocation({ kind: "s3", ...ref }), bytes: size };
  }
  if (source.kind === "stream" && dest.kind === "s3") {
    const ref: ObjectRef = { bucket: dest.bucket, key: dest.key };
    widenPipe(0);
    const stdin = new FdSource(0, () => process.stdin);
    const { size } = await uploadStream(ctx, stdin, ref, { ...(await options.uploadOptions()), partSize: options.streamPartSize() });
    return { source: "-", destination: formatLocation(dest), bytes: size };
  }
  if (source.kind === "s3" && dest.kind === "local") {
    const ref: ObjectRef = { bucket: source.bucket, key: source.key };
    const target = await localDestination(dest.path, keyBaseName(source.key));
    if (target.special) {
      // A device or FIFO (/dev/null, a named pipe): write in order, in place;
      // a temp file renamed over it would replace the device itself.
      const handle = await open(target.path, "w");
      widenPipe(handle.fd);
      try {
        const { size } = await downloadObject(ctx, ref, new OrderedWriter(new FdWriter(handle.fd), reorderWindow(ctx.queue.concurrency)), downloadPartSize(options.partSize), undefined, options.download);
        return { source: formatLocation(source), destination: target.path, bytes: size };
      } finally {
        await handle.close();
      }
    }
    const { size } = await downloadObject(ctx, ref, new FileSink(target.path, undefined, writePolicies()), downloadPartSize(options.partSize), undefined, options.download);
    return { source: formatLocation(source), destination: target.path, bytes: size };
  }
  if (source.kind === "s3" && dest.kind === "stream") {
    const { size } = await streamObject(ctx, { bucket: source.bucket, key: source.key }, options.partSize, options.download);
    return { source: formatLocation(source), destination: "-", bytes: size };
  }
  if (source.kind === "s3" && dest.kind === "s3") {
    const from: ObjectRef = { bucket: source.bucket, key: source.key };
    const to: ObjectRef = { bucket: dest.bucket, key: destinationKey(dest.key, keyBaseName(source.key)) };
    const { size } = await copyS3Object(ctx, from, to, await options.copyOptions(to.key));
    return { source: formatLocation(source), destination: formatLocation({ kind: "s3", ...to }), bytes: size };
  }
  throw new UsageError(`cannot copy ${formatLocation(source)} to ${formatLocation(dest)}`);
}

/**
 * One object to stdout, in order: its first GET reveals the size (no HEAD
 * before it), the other ranges are fetched ahead of the writer. A pipe is
 * widened only for an object it could not hold whole: for a small one the
 * process that widens it would cost more than it saves.
 */
export async function streamObject(ctx: TransferContext, ref: ObjectRef, partSize: number | undefined, options: DownloadOptions): Promise<{ size: number }> {
  const writer = new OrderedWriter(new FdWriter(1, () => process.stdout), reorderWindow(ctx.queue.concurrency));
  writer.onSize((size) => {
    if (size > LINUX_PIPE_BYTES) widenPipe(1);
  });
  return downloadObject(ctx, ref, writer, downloadPartSize(partSize), undefined, options);
}

/** A Linux pipe's default capacity. */
const LINUX_PIPE_BYTES = 64 * 1024;

/**
 * How many parts an in-order download may fetch ahead of the writer: as few
 * as keep the reader fed (ReadAhead), at most the request concurrency plus a
 * few, which keeps every connection busy while one slow part holds up the
 * head of the line, without filling the memory budget.
 */
function reorderWindow(concurrency: number): ReadAhead {
  return new ReadAhead(concurrency + 4);
}

/**
 * The file a download writes: the path itself, or the key's base name inside
 * it when the path is an existing directory or ends with a separator (as
 * aws-cli). Missing parent directories are created. `special` marks an
 * existing device or FIFO, which is written in place.
 */
async function localDestination(path: string, baseName: string): Promise<{ path: string; special: boolean }> {
  const existing = await stat(path).catch(() => undefined);
  const target = existing?.isDirectory() || path.endsWith("/") ? join(path, baseName) : path;
  await makeDirectories(dirname(target));
  const targetStat = await stat(target).catch(() => undefined);
  if (targetStat?.isDirectory()) throw new UsageError(`${target} is a directory`);
  return { path: target, special: targetStat !== undefined && !targetStat.isFile() };
}
