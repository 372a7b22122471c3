// The net layer's settings: timeouts, connection limits, pinned addresses, DNS servers, TLS.
import type { StragglerOptions } from "./stragglers.js";
import type { SecureContexts } from "./tls-contexts.js";
import type { TlsSessionStore } from "./tls-session-store.js";

/** Network timeouts and limits, all in milliseconds. */
export interface NetOptions {
  /** TCP (and TLS) connect must finish within this. */
  connectTimeoutMs: number;
  /** From the request being sent to the response headers arriving. */
  firstByteTimeoutMs: number;
  /** A response body that delivers nothing for this long fails. */
  stallTimeoutMs: number;
  /** Upper bound of keep-alive connections to one address. */
  connectionsPerAddress: number;
  /** Pinned addresses per host name (like curl's --resolve). */
  pinned?: ReadonlyMap<string, readonly string[]>;
  /** DNS servers to ask instead of the system's (--dns-server IP:PORT). */
  dnsServers?: readonly string[];
  /** When a request counts as a straggler; default DEFAULT_STRAGGLER_OPTIONS. */
  stragglers?: StragglerOptions;
  /** Receives one line per notable event (address marked bad, retired, added) for --debug. */
  debug?: (line: string) => void;
  /**
   * Told when this process's pools put an address on the bad list, so that
   * other threads' pools can follow (engine/workers: one view of address
   * health across the data plane). Not told of marks made by markBadElsewhere.
   */
  onAddressBad?: (address: string, problem: string) => void;
  /** How an https endpoint's certificate is checked; undefined: Node's defaults. */
  tls?: TlsSettings;
}

/** TLS settings for an https endpoint (--ca-bundle, --no-verify-ssl). */
export interface TlsSettings {
  /** The CAs to trust instead of Node's root store, as PEM text (--ca-bundle). */
  ca?: string;
  /** Whether the certificate is verified at all. */
  verify: boolean;
  /**
   * The contexts made from the two above, shared by this thread's
   * connections (so OpenSSL parses the CAs once, not per connect); the
   * dialer makes its own when absent. Each data-plane worker makes its own.
   */
  contexts?: SecureContexts;
  /** TLS sessions kept between runs; undefined: none (S3X_TLS_SESSION_CACHE=off, --no-verify-ssl). */
  sessions?: TlsSessionStore;
}

export const DEFAULT_NET_OPTIONS: NetOptions = {
  // The CRT's figure: with every address probed at first contact (see
  // HostAddresses.firstContact), a dead address no longer delays a transfer
  // by this much, so it only bounds how long a hopeless connect holds a request.
  connectTimeoutMs: 3_000,
  firstByteTimeoutMs: 30_000,
  stallTimeoutMs: 30_000,
  connectionsPerAddress: 64,
};
