import type { AddressStats } from "../../net/pools.js";

/**
 * One list of per-address counters from several threads' own pools (the
 * main thread's and each worker's): counts add up; an address is bad if
 * any thread has it on its bad list, up if any reached it.
 */
export function mergeAddressStats(lists: readonly (readonly AddressStats[])[]): AddressStats[] {
  const merged = new Map<string, AddressStats>();
  for (const list of lists) {
    for (const a of list) {
      const seen = merged.get(a.address);
      if (!seen) {
        merged.set(a.address, { ...a });
        continue;
      }
      seen.requests += a.requests;
      seen.errors += a.errors;
      seen.stragglers += a.stragglers;
      seen.bytesIn += a.bytesIn;
      seen.bytesOut += a.bytesOut;
      seen.rateBytesPerSec += a.rateBytesPerSec;
      seen.inFlight += a.inFlight;
      seen.hedges += a.hedges;
      seen.hedgesWon += a.hedgesWon;
      if (a.state !== "healthy" && seen.state === "healthy") seen.state = a.state;
      seen.lastProblem ??= a.lastProblem;
      if (a.reachability === "up" || seen.reachability === "unknown") seen.reachability = a.reachability;
    }
  }
  return [...merged.values()];
}
