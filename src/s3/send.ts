import type { S3Client, S3ClientResolvedConfig, ServiceInputTypes, ServiceOutputTypes } from "@aws-sdk/client-s3";
import type { Command, FinalizeRequestMiddleware, HttpHandlerOptions, HttpRequest, RequestHandler } from "@smithy/types";
import type { HttpResponse } from "@smithy/core/protocols";
import { attachRouting, routingOf, takeStartingRouting } from "../net/routing.js";

/**
 * Cancellation without per-call SDK options.
 *
 * The SDK re-resolves its whole middleware stack on every `send` that
 * carries options (such as an abortSignal) — about 0.6 ms of CPU per
 * request, which dominates small-object transfers. With `cacheMiddleware`
 * and no options the resolved stack is reused, so s3x passes the signal on
 * the command input instead: a middleware copies it onto the signed request,
 * and the request handler wrapper hands it to the real handler.
 */
const CALL_SIGNAL = Symbol("s3x.callSignal");

type WithSignal = { [CALL_SIGNAL]?: AbortSignal };

/** `client.send(command)` that can be cancelled through `signal`. */
export function send<In extends ServiceInputTypes, Out extends ServiceOutputTypes>(
  client: S3Client,
  command: Command<ServiceInputTypes, In, ServiceOutputTypes, Out, S3ClientResolvedConfig>,
  signal?: AbortSignal,
): Promise<Out> {
  if (signal) Object.defineProperty(command.input, CALL_SIGNAL, { value: signal, enumerable: true, configurable: true });
  const routing = takeStartingRouting();
  if (routing) attachRouting(command.input, routing);
  return client.send(command);
}

/** Installs the middleware that carries the signal and routing hints from input to request. */
export function carrySignals(client: S3Client): void {
  const carry: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => async (args) => {
    const request = args.request as object | undefined;
    if (request) {
      const signal = (args.input as WithSignal)[CALL_SIGNAL];
      if (signal) (request as WithSignal)[CALL_SIGNAL] = signal;
      const routing = routingOf(args.input as object);
      if (routing) attachRouting(request, routing);
    }
    return next(args);
  };
  client.middlewareStack.addRelativeTo(
    carry,
    { relation: "after", toMiddleware: "httpSigningMiddleware", name: "s3xCarrySignal" },
  );
}

/** Wraps a request handler so the carried signal arrives as its abortSignal. */
export function signalAwareHandler(
  inner: RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions>,
): RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> {
  return {
    metadata: inner.metadata,
    handle: (request, options) => {
      // A hedged attempt has a signal of its own, linked to the caller's (net/routing.ts).
      const signal = routingOf(request)?.signal ?? (request as WithSignal)[CALL_SIGNAL];
      return inner.handle(request, signal && !options?.abortSignal ? { ...options, abortSignal: signal } : options);
    },
    destroy: () => inner.destroy?.(),
  };
}
