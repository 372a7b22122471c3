import { HttpResponse } from "@smithy/core/protocols";
import type { Dispatcher } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import type { FrontEndAddress, HostAddresses } from "./pools.js";
import { ResponseBody } from "./response-body.js";
import { noteSocketBytes } from "./garbage.js";
import type { AttemptRouting } from "./routing.js";
import { abortReason } from "./failures.js";
import { RequestAccounting } from "./request-accounting.js";
import { bodyLength, sentInSlices, UPLOAD_SLICE_BYTES } from "./upload-slices.js";

/**
 * Sends one request on the chosen address's undici pool (a request whose
 * body is a stream, and all of them with S3X_HTTP_CLIENT=undici) and resolves as soon as
 * the response headers arrive; the body then flows into a ResponseBody. The
 * address's books are kept by the same RequestAccounting as net/http1's.
 */
export function undiciRequest(
  target: { address: FrontEndAddress; host: HostAddresses },
  request: { method: string; path: string; headers: Record<string, string>; body: unknown },
  options: { expectedBytes: number; signal?: AbortSignal; routing?: AttemptRouting },
): Promise<HttpResponse> {
  const { address, host } = target;
  const { method, path, headers, body } = request;
  const { signal } = options;
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const responseBody = new ResponseBody();
    let started = false;
    let controllerRef: Dispatcher.DispatchController | undefined;
    let pendingAbort: Error | undefined;
    // A request cancelled while still connecting (a black-holed address)
    // or sending must fail now, not when the connect times out.
    const abort = (reason: Error): void => {
      if (controllerRef) controllerRef.abort(reason);
      else pendingAbort = reason;
      if (accounting.settled || started) return; // a started body fails through onResponseError
      // Before the response, undici may not report the abort until its
      // connect or write finishes: fail the request now.
      accounting.cancel(reason);
      reject(reason);
    };
    const sending = bodyLength(body);
    const accounting = new RequestAccounting(address, host, sending, options.expectedBytes, signal, options.routing, abort);
    let payload: unknown = body ?? null;
    if (body instanceof Uint8Array && sentInSlices(sending)) payload = slices(body, (n) => accounting.sent(n));

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
        accounting.answer(statusCode);
        resolve(new HttpResponse({ statusCode, reason: statusMessage, headers: flattenHeaders(rawHeaders), body: responseBody }));
      },
      onResponseData(_controller, chunk) {
        accounting.received(chunk.length);
        noteSocketBytes(chunk.length);
        responseBody.deliver(chunk);
      },
      onResponseEnd() {
        accounting.complete();
        responseBody.finish();
      },
      onResponseError(_controller, err) {
        if (accounting.settled && !started) return; // already failed (cancelled while connecting)
        accounting.fail(err);
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

function flattenHeaders(raw: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** A body in slices, each counted as undici pulls it (when the socket has drained the previous one). */
function* slices(body: Uint8Array, onSlice: (bytes: number) => void): Generator<Uint8Array> {
  for (let offset = 0; offset < body.byteLength; offset += UPLOAD_SLICE_BYTES) {
    const slice = body.subarray(offset, Math.min(body.byteLength, offset + UPLOAD_SLICE_BYTES));
    onSlice(slice.byteLength);
    yield slice;
  }
}
