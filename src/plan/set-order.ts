import { isIncluded, type FilterSet } from "./filters.js";
import { groupEntries, type GroupBy } from "./groups.js";
import type { SetEntry, SetSource, SourceItem } from "./set-plan.js";
import { pickShard, type ShardBalance, type ShardSpec } from "./shard.js";
import { shuffleOrder } from "./shuffle.js";

/**
 * The order a set's entries are taken in, and which of them this worker
 * takes: --shuffle SEED and --shard I/N. Both need the whole source first
 * (a permutation of every key; a split balanced by bytes), so the ordered
 * source reads it to its end before handing out its first entry.
 */
export interface SetOrder {
  /** A permutation that depends only on the seed and the keys: the same on every worker. */
  shuffleSeed?: string;
  /** This worker's part of the (shuffled) entries. */
  shard?: ShardSpec;
  /** What the split balances between shards (default bytes). */
  shardBalance?: ShardBalance;
  /** The units shuffled and split: each object alone (undefined), or a stem's objects together, in key order. */
  groupBy?: GroupBy;
  /** Told this worker's share once it is known (before its first entry): --debug's counts, the notice of an empty share. */
  onShare?: (share: ShareSize) => void;
  /** Entries the filters exclude take no part in the split (the planner applies the same filters again). */
  filters: FilterSet;
}

/** This worker's share of the set: objects and bytes, out of the whole set's objects. */
export interface ShareSize {
  objects: number;
  bytes: number;
  ofObjects: number;
  /** With --group-by: the share's groups, out of the whole set's. */
  groups?: number;
  ofGroups?: number;
}

/**
 * `source` in the order `order` asks for. Shuffling comes before sharding,
 * so with a new seed per epoch each worker gets different objects (as
 * SageMaker's ShuffleConfig does), and every worker still computes the same
 * split from the same listing. A problem met while reading (an unreadable
 * directory) passes through first.
 */
export function orderedSource<Ref>(source: SetSource<Ref>, order: SetOrder): SetSource<Ref> {
  return {
    side: source.side,
    name: source.name,
    get whole() {
      return source.whole;
    },
    shown: (entry) => source.shown(entry),
    described: (entry) => source.described(entry),
    async *items(): AsyncGenerator<SourceItem<Ref>> {
      const entries: SetEntry<Ref>[] = [];
      for await (const item of source.items()) {
        if ("problem" in item) yield item;
        else if (isIncluded(order.filters, item.entry.relativePath)) entries.push(item.entry);
      }
      // Each object is a group of one unless --group-by gathers a stem's objects: shuffled and split as one.
      const shown = (entry: SetEntry<Ref>) => source.shown(entry);
      // A group of one is named by its object only when shuffled: naming every entry of a large listing costs for nothing.
      let groups: { name?: string; members: SetEntry<Ref>[]; size: number }[] = order.groupBy
        ? groupEntries(entries, shown, (entry) => entry.size)
        : entries.map((entry) => ({ members: [entry], size: entry.size }));
      if (order.shuffleSeed !== undefined) groups = shuffleOrder(groups, order.shuffleSeed, (group) => group.name ?? shown(group.members[0]));
      const ofGroups = groups.length;
      if (order.shard) groups = pickShard(groups, order.shard, (group) => group.size, order.shardBalance);
      const ordered = groups.flatMap((group) => group.members);
      if (order.shard) {
        const share: ShareSize = { objects: ordered.length, bytes: ordered.reduce((sum, entry) => sum + entry.size, 0), ofObjects: entries.length };
        order.onShare?.(order.groupBy ? { ...share, groups: groups.length, ofGroups } : share);
      }
      for (const entry of ordered) yield { entry };
    },
  };
}
