// Address choice: which of a host's addresses takes the next request.
import type { AddressHealth } from "./address-health.js";

/**
 * The address for the next request: among healthy addresses not in
 * `avoid`, the one with the fewest requests in flight, ties going to the
 * one used least recently (so connections round-robin over every
 * address, as the CRT does). Addresses known to connect come first; one
 * whose connect is still pending past the happy-eyeballs delay, a bad
 * one, or an avoided one is used only when nothing better is left.
 * `live` holds the addresses not retired; the caller notes the pick.
 */
export function chooseAddress<A extends AddressHealth>(live: readonly A[], avoid: ReadonlySet<string> | undefined, now: number): A {
  const usable = (a: A): boolean => a.isReady(now) && !avoid?.has(a.address);
  const tiers = [
    live.filter((a) => usable(a) && a.reachability === "up"),
    live.filter((a) => usable(a) && a.reachability !== "down" && !a.isConnectLagging(now)),
    live.filter((a) => a.isReady(now) && !a.isConnectLagging(now)),
    live.filter((a) => !a.isBad(now)),
    live.filter((a) => !avoid?.has(a.address)),
    live,
  ];
  const tier = tiers.find((t) => t.length > 0) ?? live;
  let best = tier[0];
  for (const candidate of tier) {
    if (candidate.inFlight < best.inFlight || (candidate.inFlight === best.inFlight && candidate.lastPickedAt < best.lastPickedAt)) best = candidate;
  }
  return best;
}
