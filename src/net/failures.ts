/**
 * What a failed request says about the address it went to, shared by the
 * undici path (http-handler) and s3x's own HTTP path for object bodies (raw-http), so
 * both feed the same health accounting.
 */

/**
 * Errors whose cause is the address (the front-end host or the path to it),
 * not the request: the address goes on the bad list and the retry goes
 * elsewhere.
 */
export const ADDRESS_FAILURE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
]);

export function describeCode(code: string): string {
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "UND_ERR_CONNECT_TIMEOUT":
      return "connect timed out";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "connection reset";
    case "UND_ERR_HEADERS_TIMEOUT":
      return "no answer before the first-byte timeout";
    case "UND_ERR_BODY_TIMEOUT":
      return "transfer stalled";
    default:
      return code;
  }
}

export function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const err = new Error("request aborted");
  err.name = "AbortError";
  return err;
}

/** An error with a Node/undici-style code, so retry policy and health accounting classify it. */
export function codedError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}
