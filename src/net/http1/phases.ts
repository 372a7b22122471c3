import { codedError } from "../failures.js";

/** Where a raw connection is in its life; each phase has its own socket timeout. */
export type Phase = "connecting" | "idle" | "sending" | "headers" | "body";

/** An idle keep-alive connection is closed after this long (undici's keepAliveTimeout here too). */
export const IDLE_TIMEOUT_MS = 30_000;

export interface RawTimeouts {
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  stallTimeoutMs: number;
  connectionsPerAddress: number;
  /** Receives one line per new TLS connection (--debug): the client, the protocol, whether the session resumed. */
  debug?: (line: string) => void;
}

/**
 * The error a socket timeout in `phase` fails the request with, coded as
 * undici codes it (the retry policy reads those codes); undefined for an
 * idle connection, which is simply closed.
 */
export function timeoutFailure(phase: Phase): Error | undefined {
  switch (phase) {
    case "connecting":
      return codedError("UND_ERR_CONNECT_TIMEOUT", "connect timed out");
    case "sending":
      return codedError("UND_ERR_BODY_TIMEOUT", "request body stalled: the server stopped taking bytes");
    case "headers":
      return codedError("UND_ERR_HEADERS_TIMEOUT", "no response headers before the first-byte timeout");
    case "body":
      return codedError("UND_ERR_BODY_TIMEOUT", "response body stalled");
    default:
      return undefined;
  }
}
