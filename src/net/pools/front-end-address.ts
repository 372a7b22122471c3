// One front-end address of a host: its health (AddressHealth) and its connections (undici pool, probe).
import { isIP, type Socket } from "node:net";
import { buildConnector, Pool } from "undici";
import type { NetOptions } from "../net-options.js";
import { TlsDialer } from "../tls-dial.js";
import { AddressHealth } from "./address-health.js";
import { ConnectTimes } from "./connect-times.js";
import { ConnectProbe, connectPlain } from "./connect-probe.js";

/** undici's connector, as `buildConnector` returns it. */
type Connector = ReturnType<typeof buildConnector>;

/**
 * One front-end address of a host: what s3x knows of its health (see
 * AddressHealth), undici's keep-alive pool of connections to it, and the
 * probe that connects to it ahead of any request.
 */
export class FrontEndAddress extends AddressHealth {
  /** undici's pool for this address, built at first use (see `pool`). */
  private undiciPool: Pool | undefined;
  private readonly poolOptions: { origin: string; options: Pool.Options };
  /** undici's connector (TLS, and the undici pool's connects), built at first use (see `connector`). */
  private undiciConnector: Connector | undefined;
  private readonly connectorOptions: buildConnector.BuildOptions;
  private readonly connectTimeoutMs: number;
  private readonly prober = new ConnectProbe();
  private closed = false;
  /** Whether probes over TLS dial with `tls` (s3x's own client takes their sockets) rather than undici's connector. */
  private readonly ownHttp: boolean;
  /** TLS connects for s3x's own HTTP/1.1 client (net/http1) and the probes; undefined over plain HTTP. */
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
    const host = isIP(address) === 6 ? `[${address}]` : address;
    // TLS must verify the endpoint's name, not the address we dialled.
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.ownHttp = options.ownHttp !== false;
    this.tls = protocol === "https:" ? new TlsDialer(serverName, options.tls) : undefined;
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
   * over s3x's own connections (stream bodies, S3X_HTTP_CLIENT=undici). Built at first
   * use: most runs never need it, and loading undici's HTTP/1 and
   * HTTP/2 clients is a noticeable part of a short command's start-up.
   */
  get pool(): Pool {
    this.undiciPool ??= new Pool(this.poolOptions.origin, this.poolOptions.options);
    return this.undiciPool;
  }

  /**
   * undici's connector, built at first use: only the undici pool (and its
   * probes) needs it; s3x's own client's probes connect with net.connect or TlsDialer, and loading it brings
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
    // A TLS probe of s3x's own client reads with `onread` (net/tls-dial.ts), which undici cannot: it waits for that client.
    const spare = this.tls && this.ownHttp ? undefined : this.prober.take();
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
   * to an address known to answer (see HostAddresses.firstContact). The
   * socket is kept for the pool's first connect.
   */
  probe(): void {
    if (this.closed || this.retired || this.prober.busy || this.reachability === "connecting") return;
    const startedAt = Date.now();
    this.markConnecting(startedAt);
    const target = { hostname: this.address, host: `${this.address}:${this.port}`, protocol: this.protocol, port: String(this.port), localAddress: null };
    this.prober.start(
      target,
      (t, onConnect) => {
        if (this.protocol === "http:") return connectPlain(t, this.connectTimeoutMs, onConnect);
        // Over TLS, s3x's own client dials without undici (never loaded then), and its first connection resumes the probe's session.
        if (this.tls && this.ownHttp) return this.tls.probe(this.address, this.port, this.connectTimeoutMs, onConnect);
        return this.connector(t, onConnect);
      },
      (err) => this.noteConnect(startedAt, err),
      () => !(this.closed || this.retired),
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
    // In-flight requests finish; close() resolves when they have.
    this.undiciPool?.close().catch(() => undefined);
  }

  /** Closes probe sockets: a pending connect to a black hole must not keep the process alive. */
  dropProbes(): void {
    this.closed = this.closed || this.retired;
    this.prober.drop();
  }

  async destroy(): Promise<void> {
    this.closed = true;
    this.dropProbes();
    await this.undiciPool?.destroy();
  }
}
