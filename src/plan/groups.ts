import { UsageError } from "./location.js";

/**
 * `--group-by stem`: a training sample stored as several objects
 * (WebDataset's `000123.jpg` + `000123.cls`) moves as one unit through
 * --shard and --shuffle, so a stem's objects land with one worker, next to
 * each other, in key order. Without it (the default) each object is its
 * own unit.
 */

/** How objects are grouped into units: by WebDataset's stem. */
export type GroupBy = "stem";

export const GROUP_BYS: readonly GroupBy[] = ["stem"];

/** Reads `--group-by`; anything but a known rule is refused, naming it. */
export function parseGroupBy(value: string): GroupBy {
  const groupBy = GROUP_BYS.find((g) => g === value.trim());
  if (!groupBy) {
    throw new UsageError(`invalid --group-by "${value}": expected ${GROUP_BYS.join(" or ")} (the key up to the first dot of its last path component, as WebDataset groups a sample's files)`);
  }
  return groupBy;
}

/**
 * WebDataset's rule: everything up to the first dot of the last path
 * component (`a/b/000123.seg.jpg` → `a/b/000123`). Dots in directory
 * names do not count (`v1.2/x.jpg` → `v1.2/x`); a last component with no
 * dot is its own stem (the whole key).
 */
export function stemOf(key: string): string {
  const lastSlash = key.lastIndexOf("/");
  const dot = key.indexOf(".", lastSlash + 1);
  return dot < 0 ? key : key.slice(0, dot);
}

/** One unit of a grouped set: the objects of one stem and their total size. */
export interface EntryGroup<T> {
  name: string;
  members: T[];
  size: number;
}

/**
 * The entries gathered by `nameOf` (their stem), the groups in the order of
 * their first member, the members of each in key order (UTF-8 bytes, S3's
 * listing order), whatever order a manifest gave them in: the same on every
 * worker, since it depends only on the keys.
 */
export function groupEntries<T>(entries: readonly T[], nameOf: (entry: T) => string, keyOf: (entry: T) => string, sizeOf: (entry: T) => number): EntryGroup<T>[] {
  const groups = new Map<string, EntryGroup<T>>();
  for (const entry of entries) {
    const name = nameOf(entry);
    let group = groups.get(name);
    if (!group) {
      group = { name, members: [], size: 0 };
      groups.set(name, group);
    }
    group.members.push(entry);
    group.size += sizeOf(entry);
  }
  for (const group of groups.values()) {
    if (group.members.length > 1) group.members.sort((a, b) => Buffer.compare(Buffer.from(keyOf(a), "utf8"), Buffer.from(keyOf(b), "utf8")));
  }
  return [...groups.values()];
}
