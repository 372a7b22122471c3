// Background re-resolution of one host's name, while the host is in use.
import { refreshDelay, type AddressResolver } from "../resolver.js";

/** What a refresh updates: the host's address list (HostAddresses). */
export interface RefreshedAddresses {
  /** Adopts a new DNS answer (see HostAddresses.merge). */
  merge(addresses: readonly string[]): void;
  /** Whether any request is in flight on the host. */
  hasRequestsInFlight(): boolean;
  /** How many addresses are in use (not retired), for the debug line of a failed refresh. */
  liveCount(): number;
}

/**
 * Re-resolves a host's name when its answer's TTL runs out, and hands the
 * new answer to the address list; a host that has not been used since the
 * last round is not re-resolved until it is.
 */
export class DnsRefresh {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Requests started since the last refresh: re-resolve only while the host is in use. */
  private usedSinceRefresh = true;

  constructor(
    private readonly hostName: string,
    private readonly resolver: AddressResolver,
    private readonly target: RefreshedAddresses,
    private readonly debug: ((line: string) => void) | undefined,
  ) {}

  /** A request was started on the host. */
  noteUse(): void {
    this.usedSinceRefresh = true;
  }

  /** Schedules the next round for when an answer with `ttlMs` expires. */
  schedule(ttlMs: number): void {
    if (this.closed || this.resolver.isStatic(this.hostName)) return;
    this.timer = setTimeout(() => void this.refresh(), refreshDelay(ttlMs));
    // A transfer that is done must not wait for the next DNS round.
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private async refresh(): Promise<void> {
    if (!this.usedSinceRefresh && !this.target.hasRequestsInFlight()) {
      this.schedule(Infinity);
      return;
    }
    this.usedSinceRefresh = false;
    try {
      const answer = await this.resolver.resolve(this.hostName);
      if (this.closed) return;
      this.target.merge(answer.addresses);
      this.schedule(answer.ttlMs);
    } catch (err) {
      // Keep the addresses we have; DNS trouble mid-transfer is no reason to stop.
      this.debug?.(`${this.hostName}: re-resolution failed (${(err as Error).message}); keeping ${this.target.liveCount()} addresses`);
      this.schedule(Infinity);
    }
  }
}
