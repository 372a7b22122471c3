import { createHash, randomBytes } from "node:crypto";
import { readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { makeDirectories } from "../local-directories.js";
import type { ChecksumAlgorithm, ObjectAttributes, ObjectRef } from "../../s3/operations.js";

/**
 * The local record of a multipart upload in progress, so `--resume` can find
 * it again. S3 cannot tell which source an upload came from: ListMultipartUploads
 * and ListParts return neither the upload's metadata nor anything about the
 * file, so the fingerprint of the source (path, size, mtime, part size) lives
 * here, in s3x's state directory, one small JSON file per upload. The parts
 * themselves are still verified against the file before they are reused.
 */
export interface UploadRecord {
  version: 1;
  /** Which S3 endpoint (URL or "aws"): the same bucket name elsewhere is another bucket. */
  endpoint: string;
  bucket: string;
  key: string;
  uploadId: string;
  source: { path: string; size: number; mtimeMs: number };
  partSize: number;
  checksum?: ChecksumAlgorithm;
  /**
   * What the object was to carry (Content-Type, storage class, metadata), as
   * given to CreateMultipartUpload: S3 fixes them there, so an upload is only
   * continued by a command that asks for the same ones. Absent in records
   * written before s3x kept them: such uploads are never continued.
   */
  attributes?: ObjectAttributes;
  /** ISO time the upload was created. */
  started: string;
}

/** `$S3X_STATE_DIR`, else `$XDG_STATE_HOME/s3x`, else `~/.local/state/s3x`. */
export function stateDirectory(): string {
  if (process.env.S3X_STATE_DIR) return process.env.S3X_STATE_DIR;
  const base = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(base, "s3x");
}

export function uploadsDirectory(): string {
  return join(stateDirectory(), "uploads");
}

/** Every record of one destination shares this file-name prefix. */
export function destinationPrefix(endpoint: string, ref: ObjectRef): string {
  return createHash("sha256").update(`${endpoint}\n${ref.bucket}\n${ref.key}`).digest("hex").slice(0, 32);
}

export interface StoredRecord {
  file: string;
  record: UploadRecord;
}

/** The records of uploads to this destination that s3x started and did not finish. */
export async function findUploadRecords(endpoint: string, ref: ObjectRef): Promise<StoredRecord[]> {
  const dir = uploadsDirectory();
  const prefix = destinationPrefix(endpoint, ref);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return []; // no state directory yet: nothing was ever interrupted
  }
  const found: StoredRecord[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".json")) continue;
    const file = join(dir, name);
    try {
      const record = JSON.parse(await readFile(file, "utf8")) as UploadRecord;
      if (record.version === 1 && record.bucket === ref.bucket && record.key === ref.key && record.endpoint === endpoint) found.push({ file, record });
    } catch {
      // A torn or foreign file: not ours to interpret.
    }
  }
  // Newest first: the most recent interrupted upload is the one to resume.
  return found.sort((a, b) => b.record.started.localeCompare(a.record.started));
}

/** Writes a record (atomically: a temp file renamed into place); returns its path. */
export async function saveUploadRecord(record: UploadRecord, file?: string): Promise<string> {
  const dir = uploadsDirectory();
  await makeDirectories(dir, 0o700);
  const path = file ?? join(dir, `${destinationPrefix(record.endpoint, record)}-${randomBytes(6).toString("hex")}.json`);
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(record) + "\n", { mode: 0o600 });
  await rename(temp, path);
  return path;
}

export async function removeUploadRecord(file: string): Promise<void> {
  await unlink(file).catch(() => undefined);
}

/** Removes the local record of an upload that was aborted (by `rm --uploads`). */
export async function forgetUpload(uploadId: string): Promise<void> {
  const dir = uploadsDirectory();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const file = join(dir, name);
    try {
      const record = JSON.parse(await readFile(file, "utf8")) as UploadRecord;
      if (record.uploadId === uploadId) await removeUploadRecord(file);
    } catch {
      // not a record
    }
  }
}

/** Whether a record describes this very file as it is now (its part size is the record's, whatever this run asks). */
export function recordMatchesSource(record: UploadRecord, source: { path: string; size: number; mtimeMs: number }): boolean {
  return record.source.path === source.path && record.source.size === source.size && Math.abs(record.source.mtimeMs - source.mtimeMs) < 1;
}

/**
 * Whether an upload created with `recorded` attributes and checksum gives the
 * object what this command asks for (`wanted`): same Content-Type, storage
 * class, metadata (in any order), headers, ACL, encryption and checksum
 * algorithm, unless the checksum is only s3x's default ("any": it adapts to
 * the server, so an upload created with or without one continues as it was).
 */
export function recordMatchesRequest(record: UploadRecord, wanted: { attributes: ObjectAttributes; checksum?: ChecksumAlgorithm | "any" }): boolean {
  if (!record.attributes) return false;
  return (wanted.checksum === "any" || record.checksum === wanted.checksum) && canonicalAttributes(record.attributes) === canonicalAttributes(wanted.attributes);
}

function canonicalAttributes(attrs: ObjectAttributes): string {
  const metadata = Object.entries(attrs.metadata ?? {})
    .map(([k, v]) => [k.toLowerCase(), v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Headers, ACL and encryption too: a resumed upload gets what its Create set, not what this run asks.
  const expires = attrs.expires === undefined ? null : new Date(attrs.expires).toISOString(); // a string once read back from JSON
  const headers = [attrs.cacheControl, attrs.contentEncoding, attrs.contentDisposition, attrs.contentLanguage, expires, attrs.acl, attrs.sse, attrs.sseKmsKeyId].map((v) => v ?? null);
  return JSON.stringify([attrs.contentType ?? null, attrs.storageClass ?? null, metadata, ...headers]);
}
