import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Per-attempt routing between the retry loop and the HTTP handler. The AWS
 * SDK sits between them and passes nothing of ours through, so the retry
 * loop runs each attempt inside an async context: the handler reads which
 * addresses to avoid (those that just failed this request) and writes down
 * the address it chose, so a failure can name it even when the SDK turned
 * the HTTP response into an error object that has forgotten it.
 */
export interface AttemptRouting {
  /** Addresses this request already failed on; picked again only if nothing else is left. */
  readonly avoid: ReadonlySet<string>;
  /** Set by the handler: where the attempt went. */
  address?: string;
}

const storage = new AsyncLocalStorage<AttemptRouting>();

export function runWithRouting<T>(routing: AttemptRouting, attempt: () => Promise<T>): Promise<T> {
  return storage.run(routing, attempt);
}

export function currentRouting(): AttemptRouting | undefined {
  return storage.getStore();
}
