import { buildQueryString, HttpResponse } from "@smithy/core/protocols";
import type { HttpHandlerOptions, HttpRequest, RequestHandler } from "@smithy/types";
import type { Dispatcher } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import { PoolManager, type AddressPool, type HostPools } from "./pools.js";
import { ResponseBody } from "./response-body.js";
import { noteSocketBytes } from "./garbage.js";

/** Errors whose cause is the address itself, not the request: route around it. */
const ADDRESS_FAILURE_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * The AWS SDK's request handler, built on undici: every request the SDK makes
 * goes through s3x's own keep-alive pools, one per front-end address, with
 * connect, first-byte and stall timeouts. Signing, XML and errors stay the
 * SDK's business; where the bytes go is ours.
 */
export class UndiciRequestHandler implements RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> {
  readonly metadata = { handlerProtocol: "http/1.1" };

  constructor(readonly pools: PoolManager) {}

  async handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    const protocol = request.protocol || "https:";
    const port = request.port ?? (protocol === "http:" ? 80 : 443);
    const host: HostPools = await this.pools.forOrigin(protocol, request.hostname, port);
    const address = host.pick();
    const query = buildQueryString(request.query ?? {});
    const path = query ? `${request.path}?${query}` : request.path;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      // The SDK asks for "Expect: 100-continue" on large bodies; undici refuses
      // it, and S3 does not need it: an early error reply still arrives.
      if (name.toLowerCase() !== "expect") headers[name] = value;
    }
    if (!hasHeader(headers, "host")) {
      headers.host = (protocol === "http:" && port === 80) || (protocol === "https:" && port === 443) ? request.hostname : `${request.hostname}:${port}`;
    }
    const response = await dispatch(address, host, request.method, path, headers, request.body, options?.abortSignal as AbortSignal | undefined);
    return { response };
  }

  updateHttpClientConfig(): void {}

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {
    void this.pools.close();
  }
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

function flattenHeaders(raw: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function bodyLength(body: unknown): number {
  if (typeof body === "string") return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return 0;
}

/**
 * Sends one request on the chosen address and resolves as soon as the
 * response headers arrive; the body then flows into a ResponseBody.
 */
function dispatch(
  address: AddressPool,
  host: HostPools,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal | undefined,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    const responseBody = new ResponseBody();
    let started = false;
    let controllerRef: Dispatcher.DispatchController | undefined;
    address.inFlight++;
    address.stats.requests++;
    address.stats.bytesOut += bodyLength(body);
    let done = false;
    const settle = (): void => {
      if (done) return;
      done = true;
      address.inFlight--;
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = (): void => {
      controllerRef?.abort(abortReason(signal));
    };
    if (signal?.aborted) {
      settle();
      reject(abortReason(signal));
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        controllerRef = controller;
        responseBody.attach(controller);
        if (signal?.aborted) controller.abort(abortReason(signal));
      },
      onResponseStart(_controller, statusCode, rawHeaders, statusMessage) {
        if (statusCode < 200) return; // 100-continue and friends
        started = true;
        resolve(new HttpResponse({ statusCode, reason: statusMessage, headers: flattenHeaders(rawHeaders), body: responseBody }));
      },
      onResponseData(_controller, chunk) {
        address.stats.bytesIn += chunk.length;
        noteSocketBytes(chunk.length);
        responseBody.deliver(chunk);
      },
      onResponseEnd() {
        settle();
        responseBody.finish();
      },
      onResponseError(_controller, err) {
        settle();
        address.stats.errors++;
        const code = (err as NodeJS.ErrnoException).code;
        if (code && ADDRESS_FAILURE_CODES.has(code)) host.markBad(address);
        (err as Error & { address?: string }).address ??= address.address;
        if (started) responseBody.fail(err);
        else reject(err);
      },
    };
    address.pool.dispatch(
      { method, path, headers, body: (body ?? null) as string | Buffer | Uint8Array | null, blocking: false },
      handler,
    );
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const err = new Error("request aborted");
  err.name = "AbortError";
  return err;
}
