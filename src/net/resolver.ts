import type { Resolver } from "node:dns/promises";
import { isIP } from "node:net";

/** What a host name resolved to, and for how long that answer holds. */
export interface Resolution {
  addresses: string[];
  /** Smallest TTL of the records, in ms; Infinity for pinned names and IP literals. */
  ttlMs: number;
  /** Where the answer came from (for --debug). */
  source: "pinned" | "literal" | "dns" | "lookup";
}

export interface ResolverOptions {
  /** DNS servers as "IP" or "IP:PORT" (--dns-server); default: the system's. */
  dnsServers?: readonly string[];
  /** Addresses per host name that replace DNS (--resolve HOST=IP,…). */
  pinned?: ReadonlyMap<string, readonly string[]>;
}

/** Re-resolution honours the TTL, but never more often than this… */
export const MIN_REFRESH_MS = 1_000;
/** …and at least this often, so a long transfer follows DNS changes. */
export const MAX_REFRESH_MS = 5_000;

/** When to ask again after an answer with this TTL. */
export function refreshDelay(ttlMs: number): number {
  return Math.min(MAX_REFRESH_MS, Math.max(MIN_REFRESH_MS, ttlMs));
}

/**
 * Resolves an endpoint's host name to every address it has. S3's DNS hands
 * out several A records per answer, each a different front-end host, and
 * s3x spreads its connections over all of them, so it needs the full
 * record set with TTLs: that is `Resolver#resolve4/6` (c-ares, straight to
 * the DNS server). `/etc/hosts` and search domains are only visible to
 * `getaddrinfo`, so `dns.lookup` is the fallback when DNS has no answer,
 * unless a DNS server was named explicitly (then nothing may leak to the
 * system resolver).
 */
export class AddressResolver {
  /** Made at the first name to resolve: node:dns (and dgram with it) is not loaded for an IP-literal or pinned endpoint. */
  private resolverMade: Resolver | undefined;

  constructor(private readonly options: ResolverOptions = {}) {}

  private get resolver(): Resolver {
    if (!this.resolverMade) {
      const { Resolver } = process.getBuiltinModule("node:dns/promises");
      // c-ares defaults to 5 s × 4 tries; a front-end list that answers that
      // slowly is worse than the addresses we already have.
      this.resolverMade = new Resolver({ timeout: 2_000, tries: 2 });
      if (this.options.dnsServers && this.options.dnsServers.length > 0) this.resolverMade.setServers([...this.options.dnsServers]);
    }
    return this.resolverMade;
  }

  /** True when the answer can never change (pinned, or an IP literal): no re-resolution. */
  isStatic(hostName: string): boolean {
    return isIP(hostName) !== 0 || (this.options.pinned?.get(hostName.toLowerCase())?.length ?? 0) > 0;
  }

  async resolve(hostName: string): Promise<Resolution> {
    const pinned = this.options.pinned?.get(hostName.toLowerCase());
    if (pinned && pinned.length > 0) return { addresses: [...pinned], ttlMs: Infinity, source: "pinned" };
    if (isIP(hostName)) return { addresses: [hostName], ttlMs: Infinity, source: "literal" };

    const [v4, v6] = await Promise.allSettled([
      this.resolver.resolve4(hostName, { ttl: true }),
      this.resolver.resolve6(hostName, { ttl: true }),
    ]);
    // Prefer IPv4 when both families answer: many S3-compatible servers
    // listen on one family only, and a dead family would cost a connect
    // failure per address before health routes around it.
    const records = v4.status === "fulfilled" && v4.value.length > 0 ? v4.value : v6.status === "fulfilled" ? v6.value : [];
    if (records.length > 0) {
      const ttlSeconds = Math.min(...records.map((r) => r.ttl));
      return { addresses: unique(records.map((r) => r.address)), ttlMs: ttlSeconds * 1000, source: "dns" };
    }
    if (this.options.dnsServers && this.options.dnsServers.length > 0) {
      const reason = v4.status === "rejected" ? (v4.reason as NodeJS.ErrnoException) : undefined;
      throw Object.assign(new Error(`${hostName} does not resolve (DNS server ${this.options.dnsServers.join(", ")}${reason?.code ? `: ${reason.code}` : ""})`), {
        code: "ENOTFOUND",
      });
    }
    const results = await process.getBuiltinModule("node:dns/promises").lookup(hostName, { all: true });
    const v4Lookup = results.filter((r) => r.family === 4).map((r) => r.address);
    const addresses = unique(v4Lookup.length > 0 ? v4Lookup : results.map((r) => r.address));
    // getaddrinfo tells no TTL: re-resolve at the slowest regular pace.
    return { addresses, ttlMs: MAX_REFRESH_MS, source: "lookup" };
  }
}

function unique(addresses: string[]): string[] {
  return [...new Set(addresses)];
}

/**
 * Parses `--resolve HOST=IP[,IP…]` values (repeatable) into a map; curl's
 * `HOST:PORT:IP[,IP…]` spelling is accepted too (the port is ignored: the
 * endpoint URL decides it).
 */
export function parsePinnedAddresses(values: readonly string[]): Map<string, string[]> {
  const pinned = new Map<string, string[]>();
  for (const value of values) {
    let host: string;
    let list: string;
    const eq = value.indexOf("=");
    if (eq > 0) {
      host = value.slice(0, eq);
      list = value.slice(eq + 1);
    } else {
      const curl = /^([^:]+):\d+:(.+)$/.exec(value);
      if (!curl) throw new RangeError(`--resolve expects HOST=IP[,IP…], got "${value}"`);
      host = curl[1];
      list = curl[2];
    }
    const addresses = list.split(",").map((a) => a.trim().replace(/^\[(.*)\]$/, "$1"));
    for (const address of addresses) {
      if (!isIP(address)) throw new RangeError(`--resolve ${value}: "${address}" is not an IP address`);
    }
    pinned.set(host.toLowerCase(), [...(pinned.get(host.toLowerCase()) ?? []), ...addresses]);
  }
  return pinned;
}

/** Checks `--dns-server IP[:PORT]` values; returns them in Resolver#setServers form. */
export function parseDnsServers(values: readonly string[]): string[] {
  return values.map((value) => {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
    const plain = /^([^:]+)(?::(\d+))?$/.exec(value);
    const ip = bracketed?.[1] ?? (isIP(value) === 6 ? value : plain?.[1]);
    const port = bracketed?.[2] ?? (isIP(value) === 6 ? undefined : plain?.[2]);
    if (!ip || !isIP(ip)) throw new RangeError(`--dns-server expects IP or IP:PORT, got "${value}"`);
    if (port !== undefined && !(Number(port) > 0 && Number(port) < 65536)) throw new RangeError(`--dns-server ${value}: bad port`);
    return value;
  });
}
