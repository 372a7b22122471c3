import type { TrackedRequest } from "./stragglers.js";

/**
 * Per-attempt routing between the retry loop and the HTTP handler. The AWS
 * SDK sits between them and passes nothing of ours through, so the hints
 * ride on the command input under a symbol, as the abort signal does (see
 * s3/request.ts): a middleware copies them onto the HTTP request, where the
 * handler reads which addresses to avoid (those that just failed this
 * request) and writes down the address it chose, so a failure can name it
 * even when the SDK turned the HTTP response into an error object that has
 * forgotten it.
 *
 * This replaced an AsyncLocalStorage: on Node 20 its promise hooks tax
 * every promise of every request, hints or not.
 */
export interface AttemptRouting {
  /** Addresses this request already failed on; picked again only if nothing else is left. */
  readonly avoid: ReadonlySet<string>;
  /** Set by the handler: where the attempt went. */
  address?: string;
  /**
   * This attempt's own cancellation (linked to the caller's signal), used
   * instead of the caller's: a hedged request and its duplicate share the
   * caller's signal but the loser must be stopped alone (engine/hedge.ts).
   */
  signal?: AbortSignal;
  /** Set by the handler for requests the straggler watch follows: their progress. */
  tracked?: TrackedRequest;
}

const ROUTING = Symbol("s3x.routing");

type WithRouting = { [ROUTING]?: AttemptRouting };

/**
 * The hints of the attempt being started. The retry loop sets them just
 * around the synchronous start of an attempt (`startWithRouting`), and
 * `send` takes them synchronously when the attempt calls it: every s3x
 * operation calls `send` before its first `await`, so no async context is
 * needed. An attempt that awaited first would simply run without hints
 * (no avoided addresses, no address in its error message).
 */
let starting: AttemptRouting | undefined;

/** Calls `attempt` with `routing` as the hints its request will carry. */
export function startWithRouting<T>(routing: AttemptRouting, attempt: () => T): T {
  const outer = starting;
  starting = routing;
  try {
    return attempt();
  } finally {
    starting = outer;
  }
}

/** The hints for the request being sent now, taken once: one attempt, one request. */
export function takeStartingRouting(): AttemptRouting | undefined {
  const routing = starting;
  starting = undefined;
  return routing;
}

/** Puts `routing` on an object the SDK carries along (command input, HTTP request). */
export function attachRouting(carrier: object, routing: AttemptRouting): void {
  Object.defineProperty(carrier, ROUTING, { value: routing, enumerable: true, configurable: true, writable: true });
}

export function routingOf(carrier: object | undefined): AttemptRouting | undefined {
  return (carrier as WithRouting | undefined)?.[ROUTING];
}
