// Every address of one endpoint host: the list (kept current by DNS), the choice among them, first contact.
import type { AddressResolver, Resolution } from "../resolver.js";
import { StragglerWatch, DEFAULT_STRAGGLER_OPTIONS } from "../stragglers.js";
import type { NetOptions } from "../net-options.js";
import type { AddressStats } from "./address-health.js";
import { chooseAddress } from "./address-choice.js";
import { ConnectTimes } from "./connect-times.js";
import { DnsRefresh } from "./dns-refresh.js";
import { FrontEndAddress } from "./front-end-address.js";

/**
 * Every address of one endpoint host, the choice among them, and the
 * background re-resolution that keeps the list current.
 */
export class HostAddresses {
  readonly addresses: FrontEndAddress[] = [];
  readonly stragglers: StragglerWatch;
  private readonly dns: DnsRefresh;
  private closed = false;
  /** Whether addresses are probed with a connect before use (on from first contact). */
  private probing = false;
  private readonly connectTimes = new ConnectTimes();

  constructor(
    readonly hostName: string,
    private readonly protocol: string,
    private readonly port: number,
    private readonly options: NetOptions,
    resolver: AddressResolver,
    initial: Resolution,
  ) {
    this.stragglers = new StragglerWatch(this, options.stragglers ?? DEFAULT_STRAGGLER_OPTIONS);
    this.dns = new DnsRefresh(hostName, resolver, this, options.debug);
    this.merge(initial.addresses, false);
    this.dns.schedule(initial.ttlMs);
  }

  /** The address for the next request (see chooseAddress), `avoid` passed over while others are left. */
  pick(avoid?: ReadonlySet<string>): FrontEndAddress {
    const now = Date.now();
    const live = this.live();
    for (const a of live) {
      // Back from the bad list after a failed connect: connect before trusting it with a request.
      if (this.probing && a.reachability === "down" && !a.isBad(now)) a.probe();
    }
    const best = chooseAddress(live, avoid, now);
    best.lastPickedAt = now;
    this.dns.noteUse();
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
    const live = this.live();
    for (const a of live) a.probe();
    return new Promise<void>((resolve) => {
      const settled = (): boolean => live.some((a) => a.reachability === "up") || live.every((a) => a.reachability === "down" || a.retired);
      if (settled()) return resolve();
      // Connect outcomes arrive through the addresses' callbacks; polling at 2 ms
      // costs nothing next to a connect and keeps FrontEndAddress free of listeners.
      const timer = setInterval(() => {
        if (this.closed || settled()) {
          clearInterval(timer);
          resolve();
        }
      }, 2);
    });
  }

  /** Whether a request on `address` could go somewhere healthy instead. */
  hasAlternative(address: FrontEndAddress): boolean {
    const now = Date.now();
    return this.addresses.some((a) => a !== address && !a.retired && !a.isBad(now));
  }

  /** `seenHere`: this process's own requests saw it (told on to onAddressBad), not another thread's. */
  markBad(address: FrontEndAddress, problem: string, seenHere = true): void {
    const wasBad = address.isBad();
    address.markBad(problem);
    if (wasBad) return;
    this.options.debug?.(`${this.hostName} ${address.address}: bad (${problem})`);
    if (seenHere) this.options.onAddressBad?.(address.address, problem);
  }

  noteServerError(address: FrontEndAddress, status: number): void {
    if (!address.noteServerError(status)) return;
    this.options.debug?.(`${this.hostName} ${address.address}: bad (HTTP ${status} burst)`);
    this.options.onAddressBad?.(address.address, `HTTP ${status} burst`);
  }

  /**
   * Adopts a new answer: unknown addresses get a FrontEndAddress, addresses
   * that left the answer are retired (no new requests; in-flight ones
   * finish). An empty answer changes nothing: an address list is never
   * emptied by DNS.
   */
  merge(addresses: readonly string[], announce = true): void {
    if (addresses.length === 0) return;
    const wanted = new Set(addresses);
    for (const known of this.addresses) {
      if (!known.retired && !wanted.has(known.address)) {
        known.retire();
        this.options.debug?.(`${this.hostName} ${known.address}: retired (gone from DNS)`);
      }
    }
    for (const address of addresses) {
      if (this.addresses.some((a) => a.address === address && !a.retired)) continue;
      const added = new FrontEndAddress(address, this.protocol, this.port, this.hostName, this.options, this.connectTimes);
      this.addresses.push(added);
      if (this.probing) added.probe();
      if (announce) this.options.debug?.(`${this.hostName} ${address}: added (new in DNS)`);
    }
  }

  hasRequestsInFlight(): boolean {
    return this.addresses.some((a) => a.inFlight > 0);
  }

  liveCount(): number {
    return this.live().length;
  }

  stats(): AddressStats[] {
    const now = Date.now();
    return this.addresses.map((a) => a.stats(now));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.dns.close();
    this.stragglers.close();
    await Promise.allSettled(this.addresses.map((a) => a.destroy()));
  }

  /** The addresses still in use: not retired. */
  private live(): FrontEndAddress[] {
    return this.addresses.filter((a) => !a.retired);
  }
}
