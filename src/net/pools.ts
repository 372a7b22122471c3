import { isIP } from "node:net";
import { Pool } from "undici";
import { RateMeter } from "./rate-meter.js";
import { AddressResolver, refreshDelay, type Resolution } from "./resolver.js";
import { StragglerWatch, DEFAULT_STRAGGLER_OPTIONS, type StragglerOptions } from "./stragglers.js";

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
  /** DNS servers to ask instead of the system's (--dns-server IP:PORT). */
  dnsServers?: readonly string[];
  /** When a request counts as a straggler; default DEFAULT_STRAGGLER_OPTIONS. */
  stragglers?: StragglerOptions;
  /** Receives one line per notable event (address marked bad, retired, added) for --debug. */
  debug?: (line: string) => void;
}

export const DEFAULT_NET_OPTIONS: NetOptions = {
  connectTimeoutMs: 5_000,
  firstByteTimeoutMs: 30_000,
  stallTimeoutMs: 30_000,
  connectionsPerAddress: 64,
};

/**
 * An address that failed is avoided for this long, doubling with each
 * failure in a row up to the maximum. When every address is bad, the bad
 * ones are used anyway (at once): a fleet that is all bad is more likely a
 * slow server than a dead one.
 */
const BAD_COOLDOWN_BASE_MS = 2_000;
const BAD_COOLDOWN_MAX_MS = 60_000;
/** This many 5xx answers in a row (no success between) put an address on the bad list. */
const SERVER_ERROR_BURST = 5;

export type AddressState = "healthy" | "bad" | "retired";

/** Counters per front-end address, reported with --json stats and --debug. */
export interface AddressStats {
  address: string;
  state: AddressState;
  requests: number;
  errors: number;
  /** Requests cancelled because they crawled or stalled, and sent elsewhere. */
  stragglers: number;
  bytesIn: number;
  bytesOut: number;
  /** Bytes per second in and out over the last two seconds. */
  rateBytesPerSec: number;
  inFlight: number;
  /** Why the address was last put on the bad list (or retired). */
  lastProblem?: string;
}

/** One front-end address of a host: a keep-alive pool of connections to it, and its health. */
export class AddressPool {
  readonly pool: Pool;
  inFlight = 0;
  badUntil = 0;
  retired = false;
  lastPickedAt = 0;
  private failuresInARow = 0;
  private serverErrorsInARow = 0;
  private lastProblem: string | undefined;
  private readonly meter = new RateMeter();
  readonly counters = { requests: 0, errors: 0, stragglers: 0, bytesIn: 0, bytesOut: 0 };

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
  }

  isBad(now = Date.now()): boolean {
    return this.badUntil > now;
  }

  /**
   * Back from the bad list but not yet proven: it gets one request at a
   * time until one succeeds. Without this, least-loaded picking would pour
   * a whole wave of requests onto an address the moment its cooldown ends.
   */
  isOnProbation(now = Date.now()): boolean {
    return this.failuresInARow > 0 && !this.isBad(now);
  }

  /** Whether it may take one more request now, bad-list and probation considered. */
  isReady(now = Date.now()): boolean {
    return !this.isBad(now) && !(this.isOnProbation(now) && this.inFlight > 0);
  }

  noteBytesIn(bytes: number): void {
    this.counters.bytesIn += bytes;
    this.meter.add(bytes);
  }

  noteBytesOut(bytes: number): void {
    this.counters.bytesOut += bytes;
    this.meter.add(bytes);
  }

  /** Bytes per second in and out over the last two seconds. */
  currentRate(now = Date.now()): number {
    return this.meter.rate(now);
  }

  /** A complete answer that is not a server error: the address works. */
  noteSuccess(): void {
    this.failuresInARow = 0;
    this.serverErrorsInARow = 0;
    this.badUntil = 0;
  }

  /** A 5xx answer; a burst of them means this front end is in trouble. Returns true if it went bad. */
  noteServerError(status: number): boolean {
    this.serverErrorsInARow++;
    if (this.serverErrorsInARow < SERVER_ERROR_BURST) return false;
    this.serverErrorsInARow = 0;
    this.markBad(`${SERVER_ERROR_BURST} HTTP ${status} answers in a row`);
    return true;
  }

  /** Remembers what last went wrong here, for --json and --debug, without judging the address. */
  noteProblem(problem: string): void {
    this.lastProblem = problem;
  }

  markBad(problem: string): void {
    this.failuresInARow++;
    this.lastProblem = problem;
    const cooldown = Math.min(BAD_COOLDOWN_MAX_MS, BAD_COOLDOWN_BASE_MS * 2 ** (this.failuresInARow - 1));
    this.badUntil = Date.now() + cooldown;
  }

  retire(): void {
    this.retired = true;
    this.lastProblem = "no longer in DNS";
    // In-flight requests finish; close() resolves when they have.
    this.pool.close().catch(() => undefined);
  }

  state(now = Date.now()): AddressState {
    if (this.retired) return "retired";
    return this.isBad(now) ? "bad" : "healthy";
  }

  stats(now = Date.now()): AddressStats {
    const stats: AddressStats = {
      address: this.address,
      state: this.state(now),
      ...this.counters,
      rateBytesPerSec: Math.round(this.meter.rate(now)),
      inFlight: this.inFlight,
    };
    if (this.lastProblem) stats.lastProblem = this.lastProblem;
    return stats;
  }
}

/**
 * Every address of one endpoint host, the choice among them, and the
 * background re-resolution that keeps the list current.
 */
export class HostPools {
  readonly addresses: AddressPool[] = [];
  readonly stragglers: StragglerWatch;
  private refreshTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Requests started since the last refresh: re-resolve only while the host is in use. */
  private usedSinceRefresh = true;

  constructor(
    readonly hostName: string,
    private readonly protocol: string,
    private readonly port: number,
    private readonly options: NetOptions,
    private readonly resolver: AddressResolver,
    initial: Resolution,
  ) {
    this.stragglers = new StragglerWatch(this, options.stragglers ?? DEFAULT_STRAGGLER_OPTIONS);
    this.merge(initial.addresses, false);
    this.scheduleRefresh(initial.ttlMs);
  }

  /**
   * The address for the next request: among healthy addresses not in
   * `avoid`, the one with the fewest requests in flight, ties going to the
   * one used least recently (so connections round-robin over every
   * address, as the CRT does). Bad or avoided addresses are used only when
   * nothing better is left.
   */
  pick(avoid?: ReadonlySet<string>): AddressPool {
    const now = Date.now();
    const live = this.addresses.filter((a) => !a.retired);
    const tiers = [
      live.filter((a) => a.isReady(now) && !avoid?.has(a.address)),
      live.filter((a) => a.isReady(now)),
      live.filter((a) => !a.isBad(now)),
      live.filter((a) => !avoid?.has(a.address)),
      live,
    ];
    const tier = tiers.find((t) => t.length > 0) ?? live;
    let best = tier[0];
    for (const candidate of tier) {
      if (candidate.inFlight < best.inFlight || (candidate.inFlight === best.inFlight && candidate.lastPickedAt < best.lastPickedAt)) best = candidate;
    }
    best.lastPickedAt = now;
    this.usedSinceRefresh = true;
    return best;
  }

  /** Whether a request on `address` could go somewhere healthy instead. */
  hasAlternative(address: AddressPool): boolean {
    const now = Date.now();
    return this.addresses.some((a) => a !== address && !a.retired && !a.isBad(now));
  }

  markBad(address: AddressPool, problem: string): void {
    const wasBad = address.isBad();
    address.markBad(problem);
    if (!wasBad) this.options.debug?.(`${this.hostName} ${address.address}: bad (${problem})`);
  }

  noteServerError(address: AddressPool, status: number): void {
    if (address.noteServerError(status)) this.options.debug?.(`${this.hostName} ${address.address}: bad (HTTP ${status} burst)`);
  }

  /**
   * Adopts a new answer: unknown addresses get a pool, addresses that left
   * the answer are retired (no new requests; in-flight ones finish). An
   * empty answer changes nothing: an address list is never emptied by DNS.
   */
  merge(addresses: readonly string[], announce = true): void {
    if (addresses.length === 0) return;
    const wanted = new Set(addresses);
    for (const pool of this.addresses) {
      if (!pool.retired && !wanted.has(pool.address)) {
        pool.retire();
        this.options.debug?.(`${this.hostName} ${pool.address}: retired (gone from DNS)`);
      }
    }
    for (const address of addresses) {
      if (this.addresses.some((p) => p.address === address && !p.retired)) continue;
      this.addresses.push(new AddressPool(address, this.protocol, this.port, this.hostName, this.options));
      if (announce) this.options.debug?.(`${this.hostName} ${address}: added (new in DNS)`);
    }
  }

  private scheduleRefresh(ttlMs: number): void {
    if (this.closed || this.resolver.isStatic(this.hostName)) return;
    this.refreshTimer = setTimeout(() => void this.refresh(), refreshDelay(ttlMs));
    // A transfer that is done must not wait for the next DNS round.
    this.refreshTimer.unref();
  }

  private async refresh(): Promise<void> {
    if (!this.usedSinceRefresh && !this.addresses.some((a) => a.inFlight > 0)) {
      this.scheduleRefresh(Infinity);
      return;
    }
    this.usedSinceRefresh = false;
    try {
      const answer = await this.resolver.resolve(this.hostName);
      if (this.closed) return;
      this.merge(answer.addresses);
      this.scheduleRefresh(answer.ttlMs);
    } catch (err) {
      // Keep the addresses we have; DNS trouble mid-transfer is no reason to stop.
      this.options.debug?.(`${this.hostName}: re-resolution failed (${(err as Error).message}); keeping ${this.addresses.filter((a) => !a.retired).length} addresses`);
      this.scheduleRefresh(Infinity);
    }
  }

  stats(): AddressStats[] {
    const now = Date.now();
    return this.addresses.map((a) => a.stats(now));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.refreshTimer);
    this.stragglers.close();
    await Promise.allSettled(this.addresses.map((a) => a.pool.destroy()));
  }
}

/** Connection pools for every host the S3 client talks to. */
export class PoolManager {
  private readonly hosts = new Map<string, Promise<HostPools>>();
  private readonly resolver: AddressResolver;

  constructor(private readonly options: NetOptions) {
    this.resolver = new AddressResolver({ dnsServers: options.dnsServers, pinned: options.pinned });
  }

  forOrigin(protocol: string, hostName: string, port: number): Promise<HostPools> {
    const key = `${protocol}//${hostName}:${port}`;
    let entry = this.hosts.get(key);
    if (!entry) {
      entry = this.resolver.resolve(hostName).then((answer) => {
        this.options.debug?.(`${hostName}: ${answer.addresses.join(", ")} (${answer.source}${Number.isFinite(answer.ttlMs) ? `, TTL ${answer.ttlMs / 1000} s` : ""})`);
        return new HostPools(hostName, protocol, port, this.options, this.resolver, answer);
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
    const closing: Promise<void>[] = [];
    for (const entry of this.hosts.values()) {
      const host = await entry.catch(() => undefined);
      if (host) closing.push(host.close());
    }
    this.hosts.clear();
    await Promise.allSettled(closing);
  }
}
