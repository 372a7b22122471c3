import { connect, isIP, type Socket } from "node:net";
import type { SecureContext } from "node:tls";
import { buildConnector, Pool } from "undici";
import { RateMeter } from "./rate-meter.js";
import { loopLag } from "./loop-lag.js";
import { AddressResolver, refreshDelay, type Resolution } from "./resolver.js";
import { StragglerWatch, DEFAULT_STRAGGLER_OPTIONS, type StragglerOptions } from "./stragglers.js";
import { codedError } from "./failures.js";

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
  /**
   * Plain-HTTP requests go over s3x's own connections (net/raw-http) unless
   * this is false; then every request goes through undici, as over TLS.
   */
  ownHttp?: boolean;
  /** How an https endpoint's certificate is checked; undefined: Node's defaults. */
  tls?: TlsSettings;
}

/** TLS settings for an https endpoint (--ca-bundle, --no-verify-ssl). */
export interface TlsSettings {
  /**
   * The CAs to trust instead of Node's root store, parsed once: given as
   * `ca` to every connect instead, OpenSSL would parse the bundle again for
   * each connection.
   */
  secureContext?: SecureContext;
  /** Whether the certificate is verified at all. */
  verify: boolean;
}

export const DEFAULT_NET_OPTIONS: NetOptions = {
  // The CRT's figure: with every address probed at first contact (see
  // HostPools.probe), a dead address no longer delays a transfer by this
  // much, so it only bounds how long a hopeless connect holds a request.
  connectTimeoutMs: 3_000,
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

/**
 * Happy-eyeballs delay bounds (RFC 8305 suggests 250 ms): an address whose
 * connect has not finished after this long, while others have, is passed
 * over until it connects. Within the bounds the delay follows the connect
 * times seen so far (4 × the median), so a far-away endpoint with slow
 * connects is not judged by loopback standards.
 */
const EYEBALLS_MIN_MS = 250;
const EYEBALLS_MAX_MS = 1_000;

/**
 * What s3x knows about reaching an address: never tried, a connect in
 * flight, a connect succeeded (and none failed since), or the last connect
 * failed. Only "up" addresses are first choice.
 */
export type Reachability = "unknown" | "connecting" | "up" | "down";

/** Connect durations (ms) of one host, for the adaptive happy-eyeballs delay. */
class ConnectTimes {
  private readonly samples: number[] = [];

  add(ms: number): void {
    this.samples.push(ms);
    if (this.samples.length > 32) this.samples.shift();
  }

  /** How long a connect may take before the address is passed over. */
  eyeballsDelay(): number {
    if (this.samples.length === 0) return EYEBALLS_MIN_MS;
    const sorted = [...this.samples].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    return Math.min(EYEBALLS_MAX_MS, Math.max(EYEBALLS_MIN_MS, 4 * median));
  }
}

/** undici's connector, as `buildConnector` returns it. */
type Connector = ReturnType<typeof buildConnector>;

/**
 * A plain TCP connect in the shape of undici's connector (a timeout fails
 * with undici's UND_ERR_CONNECT_TIMEOUT): what a probe over plain HTTP needs,
 * without loading undici.
 */
function connectPlain(options: buildConnector.Options, timeoutMs: number, callback: buildConnector.Callback): Socket {
  const host = options.hostname;
  const socket = connect({ host, port: Number(options.port), family: isIP(host) || undefined, noDelay: true });
  const timer = setTimeout(() => socket.destroy(codedError("UND_ERR_CONNECT_TIMEOUT", `connect to ${host} timed out`)), timeoutMs);
  const onError = (err: Error): void => callback(err, null);
  socket.once("error", onError);
  socket.once("close", () => clearTimeout(timer));
  socket.once("connect", () => {
    clearTimeout(timer);
    socket.removeListener("error", onError);
    callback(null, socket);
  });
  return socket;
}

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
  /** Whether connects to it work: unknown, connecting, up or down. */
  reachability: Reachability;
  /** Hedged duplicates of slow tail requests sent to this address… */
  hedges: number;
  /** …and how many of them answered first. */
  hedgesWon: number;
}

/** One front-end address of a host: a keep-alive pool of connections to it, and its health. */
export class AddressPool {
  /** undici's pool for this address, built at first use (see `pool`). */
  private undiciPool: Pool | undefined;
  private readonly poolOptions: { origin: string; options: Pool.Options };
  inFlight = 0;
  badUntil = 0;
  retired = false;
  lastPickedAt = 0;
  /** When bytes last moved to or from this address, in observed time (see loop-lag.ts). */
  lastBytesAt = 0;
  private failuresInARow = 0;
  private serverErrorsInARow = 0;
  private lastProblem: string | undefined;
  private readonly meter = new RateMeter();
  readonly counters = { requests: 0, errors: 0, stragglers: 0, bytesIn: 0, bytesOut: 0, hedges: 0, hedgesWon: 0 };
  reachability: Reachability = "unknown";
  /** When the connect that made it "connecting" started. */
  connectingSince = 0;
  /** undici's connector (TLS, and the undici pool's connects), built at first use (see `connector`). */
  private undiciConnector: Connector | undefined;
  private readonly connectorOptions: buildConnector.BuildOptions;
  private readonly connectTimeoutMs: number;
  /** A probe's connected socket, waiting for the pool's first connect. */
  private spare: Socket | undefined;
  /** A probe still connecting (destroyed on close). */
  private probing: Socket | undefined;
  private closed = false;

  constructor(
    readonly address: string,
    private readonly protocol: string,
    private readonly port: number,
    serverName: string,
    options: NetOptions,
    private readonly connectTimes = new ConnectTimes(),
  ) {
    const host = isIP(address) === 6 ? `[${address}]` : address;
    // TLS must verify the endpoint's name, not the address we dialled.
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.connectorOptions = {
      timeout: options.connectTimeoutMs,
      servername: isIP(serverName) ? undefined : serverName,
      ...(protocol === "https:" && options.tls ? { secureContext: options.tls.secureContext, rejectUnauthorized: options.tls.verify } : {}),
    };
    this.poolOptions = {
      origin: `${protocol}//${host}:${port}`,
      options: {
        connections: options.connectionsPerAddress,
        pipelining: 1,
        headersTimeout: options.firstByteTimeoutMs,
        bodyTimeout: options.stallTimeoutMs,
        keepAliveTimeout: 30_000,
        connect: (connectOptions, callback) => this.connect(connectOptions, callback),
      },
    };
  }

  /**
   * undici's keep-alive pool to this address, for requests that do not go
   * over s3x's own connections (TLS, S3X_HTTP_CLIENT=undici). Built at first
   * use: over plain HTTP no request needs it, and loading undici's HTTP/1 and
   * HTTP/2 clients is a noticeable part of a short command's start-up.
   */
  get pool(): Pool {
    this.undiciPool ??= new Pool(this.poolOptions.origin, this.poolOptions.options);
    return this.undiciPool;
  }

  /**
   * undici's connector, built at first use: over plain HTTP only the undici
   * pool needs it (probes connect with net.connect), and loading it brings
   * node:http and undici's core, ~10 ms of every short command.
   */
  private get connector(): Connector {
    this.undiciConnector ??= buildConnector(this.connectorOptions);
    return this.undiciConnector;
  }

  /**
   * The pool's connector: hands over a probe's socket when one is waiting
   * (the probe's connect is then not paid twice), else connects, keeping
   * note of reachability and connect times either way.
   */
  private connect(connectOptions: buildConnector.Options, callback: buildConnector.Callback): void {
    const spare = this.takeSpare();
    if (spare) {
      // Never synchronously: undici's client is mid-resume when it asks, and
      // a connect that completes inside that call leaves the request unsent.
      process.nextTick(() => callback(null, spare));
      return;
    }
    const startedAt = Date.now();
    if (this.reachability !== "up") this.markConnecting(startedAt);
    this.connector(connectOptions, (err, socket) => {
      this.noteConnect(startedAt, err);
      if (err) callback(err, null);
      else callback(null, socket);
    });
  }

  /**
   * Opens one connection ahead of any request, so the first request goes
   * to an address known to answer (see HostPools.firstContact). The socket
   * is kept for the pool's first connect.
   */
  probe(): void {
    if (this.closed || this.retired || this.probing || this.spare || this.reachability === "connecting") return;
    const startedAt = Date.now();
    this.markConnecting(startedAt);
    let finished = false;
    const target = { hostname: this.address, host: `${this.address}:${this.port}`, protocol: this.protocol, port: String(this.port), localAddress: null };
    const onConnect: buildConnector.Callback = (err, connected) => {
      finished = true;
      this.probing = undefined;
      this.noteConnect(startedAt, err);
      if (err || !connected) return;
      if (this.closed || this.retired) {
        connected.destroy();
        return;
      }
      this.spare = connected as Socket;
      // An idle spare that the server closes, or that fails, is simply dropped.
      const drop = (): void => {
        if (this.spare === connected) this.spare = undefined;
      };
      connected.once("close", drop).on("error", drop);
    };
    // undici's connector returns the socket it dials (its typings say void):
    // kept so that close() can end a connect stuck on a black hole.
    const socket: unknown =
      this.protocol === "http:" ? connectPlain(target, this.connectTimeoutMs, onConnect) : this.connector(target, onConnect);
    if (!finished) this.probing = (socket as Socket | undefined) ?? undefined;
  }

  private takeSpare(): Socket | undefined {
    const spare = this.spare;
    this.spare = undefined;
    if (!spare || spare.destroyed || spare.readyState !== "open") return undefined;
    spare.removeAllListeners("close");
    spare.removeAllListeners("error");
    return spare;
  }

  private markConnecting(at: number): void {
    this.reachability = "connecting";
    this.connectingSince = at;
  }

  private noteConnect(startedAt: number, err: Error | null): void {
    if (!err) {
      this.connectTimes.add(Date.now() - startedAt);
      this.reachability = "up";
      return;
    }
    this.reachability = "down";
    const code = (err as NodeJS.ErrnoException).code;
    // The request that needed this connection reports the failure too; a
    // probe has no request, so it speaks for itself.
    if (this.isBad()) return;
    this.markBad(code === "UND_ERR_CONNECT_TIMEOUT" ? "connect timed out" : code === "ECONNREFUSED" ? "connection refused" : `connect failed (${code ?? err.message})`);
  }

  /**
   * Whether a connect has been under way longer than the happy-eyeballs
   * delay: the address is then passed over while others work.
   */
  isConnectLagging(now = Date.now()): boolean {
    return this.reachability === "connecting" && now - this.connectingSince > this.connectTimes.eyeballsDelay();
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
    this.noteBytes(bytes);
  }

  noteBytesOut(bytes: number): void {
    this.counters.bytesOut += bytes;
    this.noteBytes(bytes);
  }

  private noteBytes(bytes: number): void {
    const now = Date.now();
    this.meter.add(bytes, now);
    this.lastBytesAt = loopLag.observedNow(now);
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
    if (problem === "connect timed out" || problem === "connection refused") this.reachability = "down";
    this.failuresInARow++;
    this.lastProblem = problem;
    const cooldown = Math.min(BAD_COOLDOWN_MAX_MS, BAD_COOLDOWN_BASE_MS * 2 ** (this.failuresInARow - 1));
    this.badUntil = Date.now() + cooldown;
  }

  retire(): void {
    this.retired = true;
    this.lastProblem = "no longer in DNS";
    this.dropProbes();
    // In-flight requests finish; close() resolves when they have.
    this.undiciPool?.close().catch(() => undefined);
  }

  /** Closes probe sockets: a pending connect to a black hole must not keep the process alive. */
  dropProbes(): void {
    this.closed = this.closed || this.retired;
    this.probing?.destroy();
    this.probing = undefined;
    this.spare?.destroy();
    this.spare = undefined;
  }

  async destroy(): Promise<void> {
    this.closed = true;
    this.dropProbes();
    await this.undiciPool?.destroy();
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
      reachability: this.reachability,
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
  /** Whether addresses are probed with a connect before use (on from first contact). */
  private probing = false;
  private readonly connectTimes = new ConnectTimes();

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
   * address, as the CRT does). Addresses known to connect come first; one
   * whose connect is still pending past the happy-eyeballs delay, a bad
   * one, or an avoided one is used only when nothing better is left.
   */
  pick(avoid?: ReadonlySet<string>): AddressPool {
    const now = Date.now();
    const live = this.addresses.filter((a) => !a.retired);
    for (const a of live) {
      // Back from the bad list after a failed connect: connect before trusting it with a request.
      if (this.probing && a.reachability === "down" && !a.isBad(now)) a.probe();
    }
    const usable = (a: AddressPool): boolean => a.isReady(now) && !avoid?.has(a.address);
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
    best.lastPickedAt = now;
    this.usedSinceRefresh = true;
    return best;
  }

  /**
   * First contact, happy-eyeballs style across the fleet: connect to every
   * address at once and resolve as soon as one of them is up (or every
   * connect has failed). The first request then goes to an address that
   * answered instead of waiting out the connect timeout on a black-holed
   * one; the others join as their connects finish, and a probe's socket
   * serves its pool's first request, so no connect is paid twice.
   */
  firstContact(): Promise<void> {
    this.probing = true;
    const live = this.addresses.filter((a) => !a.retired);
    for (const a of live) a.probe();
    return new Promise<void>((resolve) => {
      const settled = (): boolean => live.some((a) => a.reachability === "up") || live.every((a) => a.reachability === "down" || a.retired);
      if (settled()) return resolve();
      // Connect outcomes arrive through the pools' callbacks; polling at 2 ms
      // costs nothing next to a connect and keeps AddressPool free of listeners.
      const timer = setInterval(() => {
        if (this.closed || settled()) {
          clearInterval(timer);
          resolve();
        }
      }, 2);
    });
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
      const pool = new AddressPool(address, this.protocol, this.port, this.hostName, this.options, this.connectTimes);
      this.addresses.push(pool);
      if (this.probing) pool.probe();
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
    await Promise.allSettled(this.addresses.map((a) => a.destroy()));
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
        const host = new HostPools(hostName, protocol, port, this.options, this.resolver, answer);
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
    const closing: Promise<void>[] = [];
    for (const entry of this.hosts.values()) {
      const host = await entry.catch(() => undefined);
      if (host) closing.push(host.close());
    }
    this.hosts.clear();
    await Promise.allSettled(closing);
  }
}
