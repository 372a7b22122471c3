import { posix } from "node:path";

/** Where an S3 key lands under a local destination directory, or why it may not. */
export type KeyPlacement =
  | { ok: true; relativePath: string; directoryMarker: boolean }
  | { ok: false; reason: string };

/**
 * Maps a key (relative to the listed prefix) to a relative local path,
 * refusing anything that could write outside the destination: absolute
 * keys, `..` that climbs out after normalisation, NUL bytes. A key ending
 * in "/" is a directory marker and becomes a directory.
 */
export function placeKey(relativeKey: string): KeyPlacement {
  if (relativeKey.includes("\0")) return { ok: false, reason: "the key contains a NUL byte" };
  if (relativeKey.startsWith("/")) return { ok: false, reason: "the key is an absolute path" };
  const directoryMarker = relativeKey.endsWith("/");
  const normalized = posix.normalize(relativeKey);
  if (normalized === ".." || normalized.startsWith("../")) return { ok: false, reason: "the key would land outside the destination directory" };
  const trimmed = normalized.replace(/\/+$/, "");
  if (trimmed === "" || trimmed === ".") {
    return directoryMarker ? { ok: true, relativePath: "", directoryMarker } : { ok: false, reason: "the key has no file name" };
  }
  return { ok: true, relativePath: trimmed, directoryMarker };
}

/**
 * A "folder" as the AWS console's Create folder makes it: an empty object
 * whose key ends in "/". aws-cli's cp, mv and sync skip these (only rm sees
 * them): they hold no data, and as files they would have no name.
 */
export function isFolderMarker(object: { key: string; size: number }): boolean {
  return object.size === 0 && object.key.endsWith("/");
}

/** A prefix as a "directory": empty, or ending with "/". */
export function asDirectoryPrefix(prefix: string): string {
  return prefix === "" || prefix.endsWith("/") ? prefix : prefix + "/";
}

/** Joins a key prefix and a relative path (always "/"-separated). */
export function joinKey(prefix: string, relativePath: string): string {
  return asDirectoryPrefix(prefix) + relativePath;
}
