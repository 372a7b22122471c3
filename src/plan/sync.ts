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
 * aws-cli's rules for whether sync copies a path that exists on both sides:
 * sizes differ, or the source is newer; --size-only compares sizes alone;
 * --exact-timestamps (downloads) copies when the times differ at all.
 * Times are compared at whole seconds: S3 keeps LastModified to the second.
 */
export function needsCopy(source: EntryState, dest: EntryState | undefined, direction: SyncDirection, rules: SyncRules): boolean {
  if (!dest) return true;
  if (source.size !== dest.size) return true;
  if (rules.sizeOnly) return false;
  const src = Math.floor(source.mtimeMs / 1000);
  const dst = Math.floor(dest.mtimeMs / 1000);
  if (direction === "download" && rules.exactTimestamps) return src !== dst;
  return src > dst;
}
