// One front-end address of a host: its health (AddressHealth), its TLS dialer and its connect probe.
import type { Socket } from "node:net";
import type { NetOptions } from "../net-options.js";
import { TlsDialer } from "../tls-dial.js";
import { AddressHealth } from "./address-health.js";
import { ConnectTimes } from "./connect-times.js";
import { ConnectProbe, connectPlain } from "./connect-probe.js";

/**
 * One front-end address of a host: what s3x knows of its health (see
 * AddressHealth), how TLS connections to it are made, and the probe that
 * connects to it ahead of any request. The connections themselves are
 * s3x's own (net/http1/pool.ts).
 */
export class FrontEndAddress extends AddressHealth {
  private readonly connectTimeoutMs: number;
  private readonly prober = new ConnectProbe();
  private closed = false;
  /** TLS connects for s3x's HTTP/1.1 client (net/http1) and the probes; undefined over plain HTTP. */
  readonly tls: TlsDialer | undefined;

  constructor(
    address: string,
    private readonly protocol: string,
    private readonly port: number,
    serverName: string,
    options: NetOptions,
    connectTimes = new ConnectTimes(),
  ) {
    super(address, connectTimes);
    this.connectTimeoutMs = options.connectTimeoutMs;
    // TLS must verify the endpoint's name, not the address we dialled.
    this.tls = protocol === "https:" ? new TlsDialer(serverName, options.tls) : undefined;
  }

  /**
   * Opens one connection ahead of any request, so the first request goes
   * to an address known to answer (see HostAddresses.firstContact). The
   * socket is kept for the pool's first connect.
   */
  probe(): void {
    if (this.closed || this.retired || this.prober.busy || this.reachability === "connecting") return;
    const startedAt = Date.now();
    this.markConnecting(startedAt);
    const target = { hostname: this.address, port: String(this.port) };
    this.prober.start(
      target,
      (t, onConnect) => {
        // Over TLS the probe's socket becomes the first connection (its session resumed by the next ones).
        if (this.tls) return this.tls.probe(this.address, this.port, this.connectTimeoutMs, onConnect);
        return connectPlain(t, this.connectTimeoutMs, onConnect);
      },
      (err) => this.noteConnect(startedAt, err),
      // A plain-HTTP probe only tells that the address answers: s3x's client reads only sockets it opens (onread).
      () => this.tls !== undefined && !(this.closed || this.retired),
    );
  }

  /**
   * The probe's connected TLS socket, for s3x's own client's first
   * connection to this address (its handshake is then not paid twice; its
   * reads are handed over with `adoptReads`). Over plain HTTP that client
   * reads with `onread`, which only a socket it opens itself can have: none
   * is handed over.
   */
  takeTlsSpare(): Socket | undefined {
    return this.tls ? this.prober.take() : undefined;
  }

  override retire(): void {
    super.retire();
    this.dropProbes();
  }

  /** Closes probe sockets: a pending connect to a black hole must not keep the process alive. */
  dropProbes(): void {
    this.closed = this.closed || this.retired;
    this.prober.drop();
  }

  async destroy(): Promise<void> {
    this.closed = true;
    this.dropProbes();
  }
}
