/** What sync knows about one side's copy of a path. */
export interface EntryState {
  size: number;
  /** Milliseconds since the epoch: file mtime, or the object's LastModified. */
  mtimeMs: number;
}

export type SyncDirection = "upload" | "download" | "copy";

export interface SyncRules {
  sizeOnly: boolean;
  exactTimestamps: boolean;
}

/**
 * Whether sync copies a path that exists on both sides: sizes differ, or
 * (uploads, copies) the source is newer, as aws-cli; --size-only compares
 * sizes alone. Downloads copy when the times differ at all, which aws-cli
 * does only with --exact-timestamps: by default it re-downloads a local file
 * newer than the object but skips an object newer than the local file, so a
 * checkpoint rewritten in S3 at the same size is never fetched. s3x dates
 * every download with the object's LastModified, so an unchanged pair has
 * equal times and a repeated sync stays a no-op.
 * Times are compared at whole seconds: S3 keeps LastModified to the second.
 */
export function needsCopy(source: EntryState, dest: EntryState | undefined, direction: SyncDirection, rules: SyncRules): boolean {
  if (!dest) return true;
  if (source.size !== dest.size) return true;
  if (rules.sizeOnly) return false;
  const src = Math.floor(source.mtimeMs / 1000);
  const dst = Math.floor(dest.mtimeMs / 1000);
  if (direction === "download") return src !== dst;
  return src > dst;
}
