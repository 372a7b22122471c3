import { buildQueryString, type HttpResponse } from "@smithy/core/protocols";
import type { HttpHandlerOptions, HttpRequest, RequestHandler } from "@smithy/types";
import type { HostDirectory, HostAddresses } from "./pools.js";
import { routingOf } from "./routing.js";
import { abortReason, noteEndpointUrl } from "./failures.js";
import { RAW_METHODS, rawRequest } from "./http1/request.js";
import { RawPools, type RawTimeouts } from "./http1/pool.js";
import { needsFreshConnection } from "./nagle-workaround.js";
import { undiciRequest } from "./undici-dispatch.js";
import { bodyLength } from "./upload-slices.js";

/**
 * The request handler every S3 request goes through, the SDK's and s3x's
 * own signed ones (s3/request.ts): it picks the front-end address, then the
 * transport (s3x's HTTP/1.1 client over plain HTTP and TLS alike, undici for
 * stream bodies or with S3X_HTTP_CLIENT=undici), and both keep the address's
 * books through one RequestAccounting. Signing, XML and errors stay above, in s3/.
 */
export class PooledRequestHandler implements RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> {
  readonly metadata = { handlerProtocol: "http/1.1" };

  /** Keep-alive connections of s3x's own HTTP/1.1 client, beside the undici pools; none when it is turned off. */
  private readonly raw: RawPools | undefined;

  constructor(
    readonly pools: HostDirectory,
    rawTimeouts?: RawTimeouts,
  ) {
    this.raw = rawTimeouts ? new RawPools(rawTimeouts) : undefined;
  }

  async handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    const protocol = request.protocol || "https:";
    const port = request.port ?? (protocol === "http:" ? 80 : 443);
    const query = buildQueryString(request.query ?? {});
    const path = query ? `${request.path}?${query}` : request.path;
    try {
      return { response: await this.send(request, protocol, port, path, options?.abortSignal as AbortSignal | undefined) };
    } catch (err) {
      noteEndpointUrl(err, `${protocol}//${request.hostname}:${port}${path}`);
      throw err;
    }
  }

  private async send(request: HttpRequest, protocol: string, port: number, path: string, signal: AbortSignal | undefined): Promise<HttpResponse> {
    // A request whose caller has given up goes nowhere: not even a host lookup, which could open a connection.
    if (signal?.aborted) throw abortReason(signal);
    const host: HostAddresses = await this.pools.forOrigin(protocol, request.hostname, port);
    const routing = routingOf(request);
    const address = host.pick(routing?.avoid);
    if (routing) routing.address = address.address;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      // The SDK asks for "Expect: 100-continue" on large bodies; undici refuses
      // it, and S3 does not need it: an early error reply still arrives.
      if (name.toLowerCase() !== "expect") headers[name] = value;
    }
    if (!hasHeader(headers, "host")) {
      headers.host = (protocol === "http:" && port === 80) || (protocol === "https:" && port === 443) ? request.hostname : `${request.hostname}:${port}`;
    }
    // Over plain HTTP and TLS alike, every request takes s3x's own
    // connections (net/http1): object bodies land straight in the part
    // buffer (over TLS, each record decrypted straight into it), each request
    // costs less CPU than through undici, and a run that never opens an
    // undici connection never compiles its WebAssembly HTTP parser (~0.1 CPU-s).
    if (this.raw && (protocol === "http:" || protocol === "https:") && RAW_METHODS.has(request.method)) {
      const body = bodyBytes(request.body);
      if (body !== null) {
        const expectedBytes = Math.max(body?.byteLength ?? 0, rangeLength(headers));
        const fresh = needsFreshConnection(request.method, request.query, headers);
        return rawRequest({ pools: this.raw, address, host, port }, { method: request.method, path, headers, body }, { expectedBytes, signal, routing, fresh });
      }
    }
    const expectedBytes = Math.max(bodyLength(request.body), rangeLength(headers));
    return undiciRequest({ address, host }, { method: request.method, path, headers, body: request.body }, { expectedBytes, signal, routing });
  }

  updateHttpClientConfig(): void {}

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {
    this.raw?.close();
    void this.pools.close();
  }
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

/** A request body as bytes for net/http1; undefined when there is none, null when it is a stream (undici's job). */
function bodyBytes(body: unknown): Uint8Array | undefined | null {
  if (body === undefined || body === null) return undefined;
  if (body instanceof Uint8Array) return body.byteLength > 0 ? body : undefined;
  if (typeof body === "string") return body.length > 0 ? Buffer.from(body) : undefined;
  return null;
}

/** Bytes a ranged GET asks for ("bytes=A-B"), or 0 when unknown. */
function rangeLength(headers: Record<string, string>): number {
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== "range") continue;
    const match = /^bytes=(\d+)-(\d+)$/.exec(value.trim());
    return match ? Number(match[2]) - Number(match[1]) + 1 : 0;
  }
  return 0;
}
