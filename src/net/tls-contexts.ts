// The TLS contexts a thread's connections share, each made when first needed.
import type { SecureContext } from "node:tls";

/**
 * The SecureContexts of one thread's TLS connections, made when first
 * needed because making one is the costliest step of a short run's start-up:
 * Node 20 parses its ~140 bundled root certificates (~20 ms of CPU) the
 * first time a context trusts anything, even when `ca` replaces them
 * (SecureContext::SetCACert compares the store with the root store, and so
 * builds it).
 *
 * - `verifying()` trusts the --ca-bundle PEMs, else Node's root store.
 * - `resumeOnly()` trusts nothing. A connection that resumes a TLS session
 *   needs no CA: the session carries the verdict of the full handshake that
 *   made it (OpenSSL keeps the verify result in the session, and Node skips
 *   the name check for a resumed session). One that does not resume fails
 *   verification, and is dialled again with `verifying()` (tls-dial.ts).
 *   With verification off (--no-verify-ssl) it is the only context needed.
 *
 * A SecureContext cannot cross threads: each worker makes its own from `ca`.
 */
export class SecureContexts {
  private verifyingContext: SecureContext | undefined;
  private emptyContext: SecureContext | undefined;

  constructor(
    /** PEM text of --ca-bundle; undefined: Node's root store. */
    private readonly ca: string | undefined,
    /** Whether certificates are verified at all (--no-verify-ssl: false). */
    readonly verify: boolean,
  ) {}

  /** Whether the context with the CAs exists yet (its cost is paid). */
  get madeVerifying(): boolean {
    return this.verifyingContext !== undefined;
  }

  /** The context of a connection that may need a full handshake. */
  verifying(): SecureContext {
    if (!this.verify) return this.resumeOnly();
    if (this.verifyingContext) return this.verifyingContext;
    const tls = process.getBuiltinModule("node:tls");
    // No `ca`: Node's root store (and NODE_EXTRA_CA_CERTS), as tls.connect would take.
    this.verifyingContext = this.ca === undefined ? tls.createSecureContext() : tls.createSecureContext({ ca: this.ca });
    return this.verifyingContext;
  }

  /** The context of a connection that resumes a verified session (or verifies nothing). */
  resumeOnly(): SecureContext {
    this.emptyContext ??= process.getBuiltinModule("node:tls").createSecureContext({ ca: [] });
    return this.emptyContext;
  }
}
