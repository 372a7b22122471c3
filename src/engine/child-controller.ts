import { getMaxListeners, setMaxListeners } from "node:events";

/** An abort controller that also fires when its parent signal does (without a parent: a plain one); `dispose` unlinks it. */
export function childController(parent: AbortSignal | undefined): { controller: AbortController; dispose: () => void } {
  const controller = new AbortController();
  if (!parent) return { controller, dispose: () => undefined };
  // Every in-flight request listens on its transfer's signal: as many as the
  // command allows (see cli/session.ts), and no more, so a leak still warns.
  setMaxListeners(getMaxListeners(parent), controller.signal);
  const forward = (): void => controller.abort(parent.reason);
  if (parent.aborted) forward();
  else parent.addEventListener("abort", forward, { once: true });
  return { controller, dispose: () => parent.removeEventListener("abort", forward) };
}
