// --ca-bundle, --no-verify-ssl and the TLS sessions kept between runs: an https endpoint's TLS settings.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { FileTlsSessionStore, SecureContexts, trustOf, type TlsSettings } from "../engine/connection.js";
import { UsageError } from "../plan/location.js";
import type { CommonArgs } from "./options.js";

/**
 * TLS settings as in aws-cli: --ca-bundle (or $AWS_CA_BUNDLE) replaces the
 * CAs an https endpoint is verified with; --no-verify-ssl skips the check.
 * A plain-HTTP endpoint has none, and its runs never read the bundle.
 *
 * The bundle is read here, so a wrong path fails before anything is sent,
 * and its first certificate is parsed; OpenSSL takes the whole bundle at
 * the first connection that needs it (net/tls-contexts.ts: a run that
 * resumes a kept TLS session needs none). It is also the cheaper way to
 * trust a private CA than NODE_EXTRA_CA_CERTS: Node 20 parses that one,
 * with its whole root store, at every start (~40 ms of CPU with Debian's 144 certificates), whatever the
 * endpoint.
 */
export function tlsSettingsOf(args: CommonArgs, source: string, endpointUrl: string | undefined, env: NodeJS.ProcessEnv): TlsSettings | undefined {
  if (endpointUrl !== undefined && /^http:/i.test(endpointUrl)) return undefined;
  const verify = args["verify-ssl"];
  const file = args["ca-bundle"];
  let ca: string | undefined;
  if (file) {
    try {
      ca = readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`${source} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const blocks = [...ca.matchAll(/-----BEGIN CERTIFICATE-----([^-]*)-----END CERTIFICATE-----/g)];
    if (blocks.length === 0) throw new UsageError(`${source} ${file}: holds no PEM certificate`);
    // OpenSSL stops reading a bundle at its first damaged block, without a word: every block is checked
    // here (its DER frame; the first one parsed whole), so that what a damaged bundle leaves out is not
    // reported later as a certificate nobody trusts.
    const damaged = blocks.findIndex((block) => !derFrameIsWhole(block[1]!));
    try {
      if (damaged >= 0) throw new Error(`certificate ${damaged + 1} of ${blocks.length} is damaged`);
      new (process.getBuiltinModule("node:crypto").X509Certificate)(blocks[0]![0]);
    } catch (err) {
      throw new UsageError(`${source} ${file}: not a valid PEM certificate bundle (${(err as Error).message})`);
    }
  }
  const sessionDir = verify ? tlsSessionDirOf(env) : undefined;
  return {
    ca,
    verify,
    contexts: new SecureContexts(ca, verify),
    sessions: sessionDir === undefined ? undefined : new FileTlsSessionStore(sessionDir, trustOf(ca, env)),
  };
}

/**
 * Where TLS sessions are kept between runs: $S3X_TLS_SESSION_CACHE (a
 * directory, or "off"), else $XDG_CACHE_HOME/s3x/tls-sessions, else
 * ~/.cache/s3x/tls-sessions (net/tls-session-store.ts says what is kept, and why it is safe).
 */
function tlsSessionDirOf(env: NodeJS.ProcessEnv): string | undefined {
  const given = env.S3X_TLS_SESSION_CACHE;
  if (given !== undefined && given !== "") return /^(off|0|false|no)$/i.test(given) ? undefined : given;
  // As the XDG spec says, a relative $XDG_CACHE_HOME is ignored.
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".cache");
  return join(base, "s3x", "tls-sessions");
}

/** Whether a PEM block's base64 holds exactly one DER SEQUENCE, as every certificate is (its length field matching the bytes there are). */
function derFrameIsWhole(base64: string): boolean {
  const text = base64.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return false;
  const der = Buffer.from(text, "base64");
  if (der.length < 2 || der[0] !== 0x30) return false;
  const first = der[1]!;
  if (first < 0x80) return der.length === 2 + first;
  const lengthBytes = first & 0x7f;
  if (lengthBytes === 0 || lengthBytes > 4 || der.length < 2 + lengthBytes) return false;
  let length = 0;
  for (let i = 0; i < lengthBytes; i++) length = length * 256 + der[2 + i]!;
  return der.length === 2 + lengthBytes + length;
}
