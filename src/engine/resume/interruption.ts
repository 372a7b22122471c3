import { isRetryable, RequestError } from "../retry.js";

/**
 * Whether a failure interrupted a transfer rather than condemned it: the
 * user stopped it (Ctrl-C, SIGTERM) or the network failed for longer than
 * the retries lasted. Those are worth resuming, so what was transferred is
 * kept; a refusal (access denied, a changed source, bad input) is not.
 */
export function isInterruption(err: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return true;
  return err instanceof RequestError && isRetryable(err.failure);
}
