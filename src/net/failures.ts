/**
 * What a failed request says about the address it went to, for
 * net/request-accounting.ts. Timeouts keep the codes undici gave them
 * (UND_ERR_*), which the retry policy and tests know.
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

/** Failures before the request reached the server: name lookup, connect, TLS handshake. */
const CONNECT_FAILURE_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);
const TLS_FAILURE_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_)/;

/**
 * Marks a failure to reach the server with the URL the request was for, so
 * its message can name the host and port (as aws-cli's "Could not connect
 * to the endpoint URL"): an address alone does not say which endpoint a
 * run was configured with. Other failures are left as they are.
 */
export function noteEndpointUrl(err: unknown, url: string): void {
  if (typeof err !== "object" || err === null) return;
  const coded = err as { code?: unknown; cause?: { code?: unknown }; endpointUrl?: string };
  const code = typeof coded.code === "string" ? coded.code : typeof coded.cause?.code === "string" ? coded.cause.code : undefined;
  if (code && (CONNECT_FAILURE_CODES.has(code) || TLS_FAILURE_CODE.test(code))) coded.endpointUrl ??= url;
}

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

/** What a request sent after the client closed fails with; not a network failure, so never retried. */
export function clientClosed(): Error {
  return codedError("S3X_CLIENT_CLOSED", "the S3 client is closed: the command has ended");
}
