import { buildQueryString, HttpResponse } from "@smithy/core/protocols";
import type { HttpHandlerOptions, HttpRequest, RequestHandler } from "@smithy/types";
import type { Dispatcher } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import { PoolManager, type AddressPool, type HostPools } from "./pools.js";
import { ResponseBody } from "./response-body.js";
import { noteSocketBytes } from "./garbage.js";
import { routingOf, type AttemptRouting } from "./routing.js";
import { StragglerError, type TrackedRequest } from "./stragglers.js";
import { ADDRESS_FAILURE_CODES, abortReason, describeCode, noteEndpointUrl } from "./failures.js";
import { watchAbort } from "./abort-watch.js";
import { RAW_METHODS, RawPools, rawRequest, sentInSlices, UPLOAD_SLICE_BYTES, type RawTimeouts } from "./raw-http.js";
import { answersWithDocument } from "./document-answers.js";

/**
 * The AWS SDK's request handler, built on undici: every request the SDK makes
 * goes through s3x's own keep-alive pools, one per front-end address, with
 * connect, first-byte and stall timeouts. Signing, XML and errors stay the
 * SDK's business; where the bytes go is ours.
 */
export class UndiciRequestHandler implements RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> {
  readonly metadata = { handlerProtocol: "http/1.1" };

  /** Keep-alive connections of the object-body fast path (net/raw-http), beside the undici pools. */
  private readonly raw: RawPools | undefined;

  constructor(
    readonly pools: PoolManager,
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
      return await this.send(request, protocol, port, path, options);
    } catch (err) {
      noteEndpointUrl(err, `${protocol}//${request.hostname}:${port}${path}`);
      throw err;
    }
  }

  private async send(request: HttpRequest, protocol: string, port: number, path: string, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    const host: HostPools = await this.pools.forOrigin(protocol, request.hostname, port);
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
    // Over plain HTTP, every request takes s3x's own connections
    // (net/raw-http): object bodies are read straight into the part buffer,
    // each request costs less CPU than through undici, and a run that never
    // opens an undici connection never compiles its WebAssembly HTTP parser
    // (~0.1 CPU-s). TLS sockets cannot offer that.
    if (this.raw && protocol === "http:" && RAW_METHODS.has(request.method)) {
      const body = rawBody(request.body);
      if (body !== null) {
        const expected = Math.max(body?.byteLength ?? 0, rangeLength(headers));
        const fresh = answersWithDocument(request.method, request.query, headers);
        const response = await rawRequest(this.raw, address, host, port, request.method, path, headers, body, expected, options?.abortSignal as AbortSignal | undefined, routing, fresh);
        return { response };
      }
    }
    const response = await dispatch(address, host, request.method, path, headers, request.body, options?.abortSignal as AbortSignal | undefined, routing);
    return { response };
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

function flattenHeaders(raw: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** A request body as bytes for the raw path; undefined when there is none, null when it is a stream (undici's job). */
function rawBody(body: unknown): Uint8Array | undefined | null {
  if (body === undefined || body === null) return undefined;
  if (body instanceof Uint8Array) return body.byteLength > 0 ? body : undefined;
  if (typeof body === "string") return body.length > 0 ? Buffer.from(body) : undefined;
  return null;
}

function bodyLength(body: unknown): number {
  if (typeof body === "string") return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return 0;
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

/** A body in slices, each counted as undici pulls it (when the socket has drained the previous one). */
function* slices(body: Uint8Array, onSlice: (bytes: number) => void): Generator<Uint8Array> {
  for (let offset = 0; offset < body.byteLength; offset += UPLOAD_SLICE_BYTES) {
    const slice = body.subarray(offset, Math.min(body.byteLength, offset + UPLOAD_SLICE_BYTES));
    onSlice(slice.byteLength);
    yield slice;
  }
}

/**
 * Sends one request on the chosen address and resolves as soon as the
 * response headers arrive; the body then flows into a ResponseBody.
 * Along the way it keeps the address's counters and health, and lets the
 * host's straggler watch cancel the request if it falls far behind.
 */
function dispatch(
  address: AddressPool,
  host: HostPools,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal | undefined,
  routing?: AttemptRouting,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    const responseBody = new ResponseBody();
    let started = false;
    let serverError = false;
    let done = false;
    let controllerRef: Dispatcher.DispatchController | undefined;
    let pendingAbort: Error | undefined;
    // A request cancelled while still connecting (a black-holed address)
    // or sending must fail now, not when the connect times out.
    const abort = (reason: Error): void => {
      if (controllerRef) controllerRef.abort(reason);
      else pendingAbort = reason;
      if (done || started) return; // a started body fails through onResponseError
      // Before the response, undici may not report the abort until its
      // connect or write finishes: fail the request now.
      settle();
      if (!(signal?.aborted && reason === signal.reason)) address.counters.errors++;
      reject(reason);
    };
    address.inFlight++;
    address.counters.requests++;
    const sending = bodyLength(body);
    const tracked: TrackedRequest | undefined = host.stragglers.track(address, Math.max(sending, rangeLength(headers)), abort);
    // The retry loop follows a large request's progress to decide on a hedged duplicate (engine/hedge.ts).
    if (routing) routing.tracked = tracked;
    let payload: unknown = body ?? null;
    if (body instanceof Uint8Array && sentInSlices(sending)) {
      payload = slices(body, (n) => {
        address.noteBytesOut(n);
        tracked?.progress(n);
      });
    } else {
      address.noteBytesOut(sending);
    }
    const settle = (succeeded = false): void => {
      if (done) return;
      done = true;
      address.inFlight--;
      host.stragglers.untrack(tracked, succeeded);
      unwatchAbort?.();
    };
    let unwatchAbort: (() => void) | undefined;
    if (signal?.aborted) {
      settle();
      reject(abortReason(signal));
      return;
    }
    if (signal) unwatchAbort = watchAbort(signal, () => abort(abortReason(signal)));

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        controllerRef = controller;
        responseBody.attach(controller);
        if (signal?.aborted) controller.abort(abortReason(signal));
        else if (pendingAbort) controller.abort(pendingAbort);
      },
      onResponseStart(_controller, statusCode, rawHeaders, statusMessage) {
        if (statusCode < 200) return; // 100-continue and friends
        started = true;
        if (statusCode >= 500) {
          serverError = true;
          host.noteServerError(address, statusCode);
        }
        resolve(new HttpResponse({ statusCode, reason: statusMessage, headers: flattenHeaders(rawHeaders), body: responseBody }));
      },
      onResponseData(_controller, chunk) {
        address.noteBytesIn(chunk.length);
        // An upload's answer is a few hundred bytes: only GET bodies are payload.
        if (sending === 0) tracked?.progress(chunk.length);
        noteSocketBytes(chunk.length);
        responseBody.deliver(chunk);
      },
      onResponseEnd() {
        settle(!serverError);
        if (!serverError) address.noteSuccess();
        responseBody.finish();
      },
      onResponseError(_controller, err) {
        if (done && !started) return; // already failed (cancelled while connecting)
        settle();
        const code = (err as NodeJS.ErrnoException).code;
        // A cancellation by the caller says nothing about the address.
        if (!(signal?.aborted && err === signal.reason)) address.counters.errors++;
        if (code && ADDRESS_FAILURE_CODES.has(code)) host.markBad(address, describeCode(code));
        if (!(err instanceof StragglerError)) (err as Error & { address?: string }).address ??= address.address;
        if (started) responseBody.fail(err);
        else reject(err);
      },
    };
    address.pool.dispatch(
      // undici documents (and implements) iterable bodies; its typings lag behind.
      { method, path, headers, body: payload as string | Buffer | Uint8Array | null, blocking: false },
      handler,
    );
  });
}
