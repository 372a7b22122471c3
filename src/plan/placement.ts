import { join, resolve, sep } from "node:path";
import { placeKey } from "./keys.js";
import type { Placement } from "./set-plan.js";

/** A file under a local destination directory: where it is written, and how the output names it. */
export interface LocalTarget {
  /** Absolute path, always inside the destination's root. */
  path: string;
}

/** An object under a destination prefix. */
export interface PrefixTarget {
  bucket: string;
  key: string;
}

/**
 * Key-to-path safety: where a key (relative to the listed prefix) lands
 * under the local directory `root`, refusing what could write outside it
 * (absolute keys, `..` that climbs out, NUL bytes: plan/keys.ts placeKey),
 * a path that would still resolve outside `root`, and a key ending in "/"
 * that holds bytes (no file can have that name; empty folder markers are
 * skipped by the source before this). `shownRoot` is the directory as the
 * user wrote it, for the output lines.
 */
export function placeInDirectory(root: string, shownRoot: string, relativeKey: string, size: number): Placement<LocalTarget> {
  const absoluteRoot = resolve(root);
  const placement = placeKey(relativeKey);
  if (!placement.ok) return { ok: false, reason: placement.reason, shown: "", evenIfExcluded: true };
  const path = placement.relativePath === "" ? absoluteRoot : join(absoluteRoot, placement.relativePath);
  if (path !== absoluteRoot && !path.startsWith(absoluteRoot + sep)) return { ok: false, reason: "it would land outside the destination directory", shown: path, evenIfExcluded: false };
  // Not a folder marker (those are empty and never reach here): bytes under a name no file can have.
  if (placement.directoryMarker) return { ok: false, reason: `it ends in "/", as a folder does, but holds ${size} bytes`, shown: path, evenIfExcluded: false };
  return { ok: true, relativePath: placement.relativePath, target: { path }, shown: join(shownRoot, placement.relativePath) };
}

/** Where a relative path lands under a destination prefix (a directory prefix: empty or ending in "/"): any path is a valid key. */
export function placeUnderPrefix(bucket: string, prefix: string, relativePath: string): Placement<PrefixTarget> {
  const key = prefix + relativePath;
  return { ok: true, relativePath, target: { bucket, key }, shown: `s3://${bucket}/${key}` };
}
