import { basename } from "node:path";

/** Where bytes come from or go to, as written on the command line. */
export type Location =
  | { kind: "s3"; bucket: string; key: string }
  | { kind: "local"; path: string }
  | { kind: "stream" };

/** A malformed argument: the CLI reports it as a usage error. */
export class UsageError extends Error {
  readonly code = "S3X_USAGE";
}

/**
 * Reads `s3://bucket/key`, `-` (stdin or stdout) or a local path.
 * Keys are taken verbatim: spaces, unicode, `+` and `%` are key characters.
 */
export function parseLocation(arg: string): Location {
  if (arg === "-") return { kind: "stream" };
  if (/^s3:/i.test(arg)) {
    const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/is.exec(arg);
    if (!match || match[1] === "") throw new UsageError(`malformed S3 URL "${arg}": expected s3://bucket/key`);
    const bucket = match[1];
    if (!/^[A-Za-z0-9._-]{1,255}$/.test(bucket)) throw new UsageError(`malformed S3 URL "${arg}": "${bucket}" is not a valid bucket name`);
    return { kind: "s3", bucket, key: match[2] ?? "" };
  }
  if (arg === "") throw new UsageError("empty path");
  return { kind: "local", path: arg };
}

export function formatLocation(loc: Location): string {
  switch (loc.kind) {
    case "s3":
      return `s3://${loc.bucket}/${loc.key}`;
    case "local":
      return loc.path;
    case "stream":
      return "-";
  }
}

/**
 * The key an upload lands on: as aws-cli, a destination that is a bucket or
 * ends with "/" names a prefix, and the source's file name is appended.
 */
export function destinationKey(destKey: string, sourceName: string): string {
  if (destKey === "" || destKey.endsWith("/")) return destKey + sourceName;
  return destKey;
}

/** The last path segment of a key, for naming a downloaded file. */
export function keyBaseName(key: string): string {
  return basename(key);
}
