import type { HostDirectory, HostAddresses } from "./pools.js";
import type { NetOptions } from "./net-options.js";
import type { AttemptRouting } from "./routing.js";
import type { HttpAnswer } from "./http-answer.js";
import { abortReason, noteEndpointUrl } from "./failures.js";
import { rawRequest } from "./http1/request.js";
import { RawPools } from "./http1/pool.js";

/** A request ready for the wire: signed, its query already in `path`, its body (if any) in one buffer. */
export interface WireRequest {
  protocol: "http:" | "https:";
  hostname: string;
  /** Undefined: the scheme's default port. */
  port?: number;
  method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  /** Path and query string, encoded. */
  path: string;
  /** Lower-case names; host included. */
  headers: Record<string, string>;
  body?: Uint8Array;
}

export interface WireOptions {
  signal?: AbortSignal;
  /** This attempt's routing: addresses to avoid, and where it went (written here). */
  routing?: AttemptRouting;
  /** Bytes a ranged GET asks for (the straggler watch's yardstick); bodies sent count themselves. */
  expectedBytes?: number;
  /** Send on a new connection (net/nagle-workaround.ts). */
  fresh?: boolean;
}

/** What the request layer sends through: the Transport below (a test may record instead). */
export interface WireSender {
  send(request: WireRequest, options?: WireOptions): Promise<HttpAnswer>;
}

/**
 * The one transport every S3 request goes through: it picks the front-end
 * address (net/pools), then sends on s3x's own HTTP/1.1 connections
 * (net/http1), plain HTTP and TLS alike, keeping the address's books
 * (net/request-accounting.ts). Signing, XML and errors stay above, in s3/.
 *
 * Why s3x's own client and not undici: in one interleaved A/B (7 pairs per
 * workload, radosgw, 2 cores, 2026-11-28), undici cost more client CPU in
 * all 84 pairs: 1 GiB downloads +72 % over HTTP and +23 % over HTTPS, 2,000
 * small objects +21 % / +14 %, uploads +8–10 %, and 15–34 MiB more peak RSS.
 */
export class Transport implements WireSender {
  /** Keep-alive connections to every address. */
  private readonly raw: RawPools;

  constructor(
    readonly pools: HostDirectory,
    net: NetOptions,
  ) {
    this.raw = new RawPools(net);
  }

  async send(request: WireRequest, options: WireOptions = {}): Promise<HttpAnswer> {
    const port = request.port ?? (request.protocol === "http:" ? 80 : 443);
    try {
      return await this.sendTo(request, port, options);
    } catch (err) {
      noteEndpointUrl(err, `${request.protocol}//${request.hostname}:${port}${request.path}`);
      throw err;
    }
  }

  private async sendTo(request: WireRequest, port: number, options: WireOptions): Promise<HttpAnswer> {
    const { signal, routing } = options;
    // A request whose caller has given up goes nowhere: not even a host lookup, which could open a connection.
    if (signal?.aborted) throw abortReason(signal);
    const host: HostAddresses = await this.pools.forOrigin(request.protocol, request.hostname, port);
    const address = host.pick(routing?.avoid);
    if (routing) routing.address = address.address;
    const body = request.body && request.body.byteLength > 0 ? request.body : undefined;
    const expectedBytes = Math.max(body?.byteLength ?? 0, options.expectedBytes ?? 0);
    const wire = { method: request.method, path: request.path, headers: request.headers, body };
    return rawRequest({ pools: this.raw, address, host, port }, wire, { expectedBytes, signal, routing, fresh: options.fresh });
  }

  async close(): Promise<void> {
    this.raw.close();
    await this.pools.close();
  }
}
