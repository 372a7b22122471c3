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
 * The entries gathered by the stem of their key, the groups in the order
 * of their first member, the members of each in key order (S3's listing
 * order, UTF-8 bytes), whatever order a manifest gave them in: the same on
 * every worker, since it depends only on the keys. Each key is computed
 * once: a listing may hold millions.
 */
export function groupEntries<T>(entries: readonly T[], keyOf: (entry: T) => string, sizeOf: (entry: T) => number): EntryGroup<T>[] {
  const groups = new Map<string, EntryGroup<T> & { keys: string[] }>();
  for (const entry of entries) {
    const key = keyOf(entry);
    const name = stemOf(key);
    let group = groups.get(name);
    if (!group) {
      group = { name, members: [], keys: [], size: 0 };
      groups.set(name, group);
    }
    group.members.push(entry);
    group.keys.push(key);
    group.size += sizeOf(entry);
  }
  return [...groups.values()].map(({ name, members, keys, size }) => {
    if (members.length === 1) return { name, members, size };
    // Array.prototype.sort is stable: a key listed twice keeps its manifest order.
    const order = members.map((_, i) => i).sort((a, b) => compareUtf8(keys[a], keys[b]));
    return { name, members: order.map((i) => members[i]), size };
  });
}

/**
 * UTF-8 byte order without encoding: code-unit order, except that a
 * surrogate (a code point above U+FFFF) sorts after U+E000..U+FFFF, as its
 * four UTF-8 bytes do.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate !== ySurrogate && (xSurrogate ? y : x) >= 0xe000) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
