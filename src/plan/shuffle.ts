import { createHash } from "node:crypto";
import { UsageError } from "./location.js";

/**
 * `--shuffle SEED`: an order every worker computes alike, so that N workers
 * sharding a shuffled listing still split it disjointly, and a new seed per
 * epoch gives a new order. It must not depend on Math.random, the Node
 * version or the order the listing arrived in: each key is ranked by
 * SHA-256(seed NUL key), a fixed function everywhere.
 */

/**
 * Reads the seed: any non-empty string, taken verbatim. Integers are the
 * common case (`--shuffle $EPOCH`, a new seed per epoch); an empty one is
 * refused because it is what an unset shell variable gives.
 */
export function parseSeed(value: string): string {
  if (value === "") throw new UsageError('invalid --shuffle "": expected a seed, such as the epoch number (--shuffle 3)');
  return value;
}

/**
 * The entries in the seed's order: a permutation that depends only on the
 * seed and the keys. Equal hashes (never seen in practice) fall back to the
 * key's code-unit order; entries with equal keys keep their input order
 * (they are indistinguishable by key, so any order of them is the same
 * order of keys).
 */
export function shuffleOrder<T>(entries: readonly T[], seed: string, keyOf: (entry: T) => string): T[] {
  const ranked = entries.map((entry, position) => {
    const key = keyOf(entry);
    return { entry, key, rank: createHash("sha256").update(seed).update("\0").update(key).digest("hex"), position };
  });
  ranked.sort((a, b) => compare(a.rank, b.rank) || compare(a.key, b.key) || a.position - b.position);
  return ranked.map((r) => r.entry);
}

/** Code-unit comparison, not localeCompare: the same result whatever the locale or ICU build. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
