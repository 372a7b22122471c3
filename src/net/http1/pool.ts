import type { FrontEndAddress } from "../pools.js";
import { codedError } from "../failures.js";
import { RawConnection, type ConnectionOwner } from "./connection.js";
import type { RawTimeouts } from "./phases.js";

export type { RawTimeouts } from "./phases.js";

/** Idle keep-alive connections per address. */
export class RawPools implements ConnectionOwner {
  private readonly idle = new Map<FrontEndAddress, RawConnection[]>();
  private readonly open = new Set<RawConnection>();
  private closed = false;

  /** Whether close() was called: no connection is opened after it. */
  get isClosed(): boolean {
    return this.closed;
  }

  constructor(readonly timeouts: RawTimeouts) {}

  /** An idle connection to `address`, or a new one (always new when `fresh`). */
  take(address: FrontEndAddress, port: number, fresh = false): { conn: RawConnection; reused: boolean } {
    const list = fresh ? undefined : this.idle.get(address);
    while (list && list.length > 0) {
      const conn = list.pop()!;
      if (conn.usable) return { conn, reused: true };
    }
    const conn = new RawConnection(this, address, port, address.takeTlsSpare());
    this.open.add(conn);
    return { conn, reused: false };
  }

  /** A connection whose exchange ended cleanly goes back to its address's idle list. */
  giveBack(conn: RawConnection): void {
    if (this.closed || conn.address.retired || !conn.usable) {
      conn.destroy();
      return;
    }
    let list = this.idle.get(conn.address);
    if (!list) this.idle.set(conn.address, (list = []));
    // Too many idle connections for one address serve nobody.
    if (list.length >= this.timeouts.connectionsPerAddress) {
      conn.destroy();
      return;
    }
    list.push(conn);
    conn.goIdle();
  }

  forget(conn: RawConnection): void {
    this.open.delete(conn);
    const list = this.idle.get(conn.address);
    const i = list ? list.indexOf(conn) : -1;
    if (list && i >= 0) list.splice(i, 1);
  }

  close(): void {
    this.closed = true;
    if (this.open.size === 0) return;
    const err = codedError("UND_ERR_CLOSED", "connection closed: the client is shutting down");
    for (const conn of [...this.open]) conn.destroy(err);
    this.idle.clear();
  }
}
