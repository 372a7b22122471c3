// The net layer's settings: timeouts, connection limits, pinned addresses, DNS servers, TLS.
import type { SecureContext } from "node:tls";
import type { StragglerOptions } from "./stragglers.js";

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
  /**
   * The CAs to trust instead of Node's root store, parsed once: given as
   * `ca` to every connect instead, OpenSSL would parse the bundle again for
   * each connection.
   */
  secureContext?: SecureContext;
  /** The same CAs as PEM text: a SecureContext cannot cross threads, so each data-plane worker makes its own from it. */
  ca?: string;
  /** Whether the certificate is verified at all. */
  verify: boolean;
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
