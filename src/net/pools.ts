import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Pool } from "undici";

/** Network timeouts and limits, all in milliseconds. */
export interface NetOptions {
  /** TCP (and TLS) connect must finish within this. */
  connectTimeoutMs: number;
  /** From the request being sent to the response headers arriving. */
  firstByteTimeoutMs: number;
  /** A response body that delivers nothing for this long fails. */
  stallTimeoutMs: number;
  /** Upper bound of keep-alive connections to one address. */
  connectionsPerAddress: number;
  /** Pinned addresses per host name (like curl's --resolve). */
  pinned?: ReadonlyMap<string, readonly string[]>;
}

export const DEFAULT_NET_OPTIONS: NetOptions = {
  connectTimeoutMs: 5_000,
  firstByteTimeoutMs: 30_000,
  stallTimeoutMs: 30_000,
  connectionsPerAddress: 64,
};

/** How long an address that refused or timed out a connect is avoided. */
const BAD_ADDRESS_COOLDOWN_MS = 15_000;

/** Counters per front-end address, reported with --json stats. */
export interface AddressStats {
  address: string;
  requests: number;
  errors: number;
  bytesIn: number;
  bytesOut: number;
}

/** One front-end address of a host: a keep-alive pool of connections to it. */
export class AddressPool {
  readonly pool: Pool;
  inFlight = 0;
  badUntil = 0;
  readonly stats: AddressStats;

  constructor(readonly address: string, protocol: string, port: number, serverName: string, options: NetOptions) {
    const host = isIP(address) === 6 ? `[${address}]` : address;
    this.pool = new Pool(`${protocol}//${host}:${port}`, {
      connections: options.connectionsPerAddress,
      pipelining: 1,
      headersTimeout: options.firstByteTimeoutMs,
      bodyTimeout: options.stallTimeoutMs,
      keepAliveTimeout: 30_000,
      // TLS must verify the endpoint's name, not the address we dialled.
      connect: { timeout: options.connectTimeoutMs, servername: isIP(serverName) ? undefined : serverName },
    });
    this.stats = { address, requests: 0, errors: 0, bytesIn: 0, bytesOut: 0 };
  }

  isBad(now: number): boolean {
    return this.badUntil > now;
  }
}

/** Every address of one endpoint host, and the choice among them. */
export class HostPools {
  constructor(readonly hostName: string, readonly addresses: AddressPool[]) {}

  /** The least-loaded healthy address; a bad one only when no healthy one is left. */
  pick(): AddressPool {
    const now = Date.now();
    let best: AddressPool | undefined;
    for (const candidate of this.addresses) {
      if (candidate.isBad(now)) continue;
      if (!best || candidate.inFlight < best.inFlight) best = candidate;
    }
    if (best) return best;
    // All bad: the one that went bad first is the likeliest to have recovered.
    return this.addresses.reduce((a, b) => (a.badUntil <= b.badUntil ? a : b));
  }

  markBad(address: AddressPool): void {
    address.badUntil = Date.now() + BAD_ADDRESS_COOLDOWN_MS;
  }
}

/** Connection pools for every host the S3 client talks to. */
export class PoolManager {
  private readonly hosts = new Map<string, Promise<HostPools>>();

  constructor(private readonly options: NetOptions) {}

  forOrigin(protocol: string, hostName: string, port: number): Promise<HostPools> {
    const key = `${protocol}//${hostName}:${port}`;
    let entry = this.hosts.get(key);
    if (!entry) {
      entry = this.resolve(hostName).then(
        (addresses) => new HostPools(hostName, addresses.map((a) => new AddressPool(a, protocol, port, hostName, this.options))),
      );
      // A failed lookup must not be cached: the next request tries again.
      entry.catch(() => this.hosts.delete(key));
      this.hosts.set(key, entry);
    }
    return entry;
  }

  private async resolve(hostName: string): Promise<string[]> {
    const pinned = this.options.pinned?.get(hostName);
    if (pinned && pinned.length > 0) return [...pinned];
    if (isIP(hostName)) return [hostName];
    const results = await lookup(hostName, { all: true });
    // Prefer IPv4 when both families answer: many S3-compatible servers listen on one only.
    const v4 = results.filter((r) => r.family === 4).map((r) => r.address);
    return v4.length > 0 ? v4 : results.map((r) => r.address);
  }

  async stats(): Promise<AddressStats[]> {
    const all: AddressStats[] = [];
    for (const entry of this.hosts.values()) {
      const host = await entry.catch(() => undefined);
      if (host) for (const a of host.addresses) all.push({ ...a.stats });
    }
    return all;
  }

  async close(): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const entry of this.hosts.values()) {
      const host = await entry.catch(() => undefined);
      if (host) for (const a of host.addresses) closing.push(a.pool.destroy());
    }
    this.hosts.clear();
    await Promise.allSettled(closing);
  }
}
