// Every host the S3 client talks to: one HostAddresses per origin, resolved once.
import { clientClosed } from "../failures.js";
import { AddressResolver } from "../resolver.js";
import type { NetOptions } from "../net-options.js";
import type { AddressStats } from "./address-health.js";
import { HostAddresses } from "./host-addresses.js";

/** The addresses of every host the S3 client talks to, by origin. */
export class HostDirectory {
  private readonly hosts = new Map<string, Promise<HostAddresses>>();
  private readonly resolver: AddressResolver;
  /** Set by close(): from then on no host is looked up again, so no connection is opened. */
  private closed = false;

  constructor(private readonly options: NetOptions) {
    this.resolver = new AddressResolver({ dnsServers: options.dnsServers, pinned: options.pinned });
  }

  forOrigin(protocol: string, hostName: string, port: number): Promise<HostAddresses> {
    // A request sent after the command ended (a listing range that was
    // waiting, say) would otherwise resolve the host again and open a
    // connection nobody closes: the process could not exit until the server did.
    if (this.closed) return Promise.reject(clientClosed());
    const key = `${protocol}//${hostName}:${port}`;
    let entry = this.hosts.get(key);
    if (!entry) {
      entry = this.resolver.resolve(hostName).then((answer) => {
        this.options.debug?.(`${hostName}: ${answer.addresses.join(", ")} (${answer.source}${Number.isFinite(answer.ttlMs) ? `, TTL ${answer.ttlMs / 1000} s` : ""})`);
        const host = new HostAddresses(hostName, protocol, port, this.options, this.resolver, answer);
        return host.firstContact().then(() => host);
      });
      // A failed lookup must not be cached: the next request tries again.
      entry.catch(() => this.hosts.delete(key));
      this.hosts.set(key, entry);
    }
    return entry;
  }

  /** Another thread's pools found `address` bad: put it on the bad list here too (not told on again). */
  async markBadElsewhere(address: string, problem: string): Promise<void> {
    for (const entry of this.hosts.values()) {
      const host = await entry.catch(() => undefined);
      const known = host?.addresses.find((a) => a.address === address && !a.retired);
      if (host && known) host.markBad(known, `${problem}, seen by another thread`, false);
    }
  }

  /** A hedged duplicate another thread sent for a request that went to `address` here: counted on it (--json). */
  async countHedge(address: string, won: boolean): Promise<void> {
    for (const entry of this.hosts.values()) {
      const known = (await entry.catch(() => undefined))?.addresses.find((a) => a.address === address);
      if (!known) continue;
      known.counters.hedges++;
      if (won) known.counters.hedgesWon++;
      return;
    }
  }

  async stats(): Promise<AddressStats[]> {
    const all: AddressStats[] = [];
    for (const entry of this.hosts.values()) {
      const host = await entry.catch(() => undefined);
      if (host) all.push(...host.stats());
    }
    return all;
  }

  async close(): Promise<void> {
    this.closed = true;
    const closing: Promise<void>[] = [];
    for (const entry of this.hosts.values()) {
      const host = await entry.catch(() => undefined);
      if (host) closing.push(host.close());
    }
    this.hosts.clear();
    await Promise.allSettled(closing);
  }
}
