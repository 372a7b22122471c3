// Every host the S3 client talks to: one HostAddresses per origin, resolved once.
import { codedError } from "../failures.js";
import { AddressResolver } from "../resolver.js";
import type { NetOptions } from "../net-options.js";
import type { AddressStats } from "./address-health.js";
import { HostAddresses } from "./host-addresses.js";

/** The addresses of every host the S3 client talks to, by origin. */
export class HostDirectory {
  private readonly hosts = new Map<string, Promise<HostAddresses>>();
  private readonly resolver: AddressResolver;
  private closed = false;

  constructor(private readonly options: NetOptions) {
    this.resolver = new AddressResolver({ dnsServers: options.dnsServers, pinned: options.pinned });
  }

  forOrigin(protocol: string, hostName: string, port: number): Promise<HostAddresses> {
    // A request made after close (work still winding down when a command failed) would
    // otherwise open a new host whose first-contact sockets nobody closes: the process
    // then lingers until the server drops them (90 s behind radosgw).
    if (this.closed) return Promise.reject(codedError("UND_ERR_CLOSED", "connection closed: the client is shutting down"));
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
