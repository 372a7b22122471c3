// TLS sessions kept between runs, so that a short run's first connection resumes instead of paying a full handshake.
import { createHash, randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A session an earlier run kept. */
export interface KeptSession {
  session: Buffer;
  /** How long ago it was kept. */
  ageMs: number;
  /** When the full handshake its line of resumptions began with checked the certificate (ms since the epoch). */
  verifiedAt: number;
}

/** A FileTlsSessionStore as plain data, to open it again in another thread. */
export interface KeptSessionsLocation {
  dir: string;
  /** What verified the sessions kept there (trustOf), as the main thread found it. */
  trust: string;
}

/** Where an address's TLS session from an earlier run is kept, and found again. */
export interface TlsSessionStore {
  /** The session last kept for `address:port` of `serverName`, if one is fit to offer. */
  load(serverName: string, address: string, port: number): KeptSession | undefined;
  /**
   * Keeps a session of a verified TLS 1.3 connection to `address:port`;
   * `verifiedAt`: when the certificate was last checked, if not now (a
   * session from a resumed connection inherits its predecessor's).
   */
  save(serverName: string, address: string, port: number, session: Buffer, verifiedAt?: number): void;
  /** Drops what is kept for `address:port` (the server did not take it). */
  forget(serverName: string, address: string, port: number): void;
  /** Where sessions are kept, or why they are not, for --debug. */
  describe(): string;
}

/**
 * A session is not offered once this long has passed since a full handshake
 * checked the certificate, however often it was resumed and renewed since
 * (servers' TLS 1.3 tickets live up to 7 days, and a server renews them at
 * each resumption; an expired or replaced certificate should not go unseen longer).
 */
export const TLS_SESSION_MAX_AGE_MS = 12 * 3600_000;
/**
 * A run that resumed a session kept less than this long ago does not write
 * the newer one (a home directory may be on NFS); an older one is replaced,
 * so a server's ticket lifetime (often 2 hours) is not reached in steady use.
 */
export const TLS_SESSION_REFRESH_MS = 10 * 60_000;
/** Addresses kept per endpoint (an endpoint's DNS answers rotate); the oldest go first. */
const MAX_ADDRESSES = 16;

interface StoredSession {
  /** When it was kept (ms since the epoch). */
  at: number;
  /** When the certificate was last checked by a full handshake (ms since the epoch). */
  verifiedAt: number;
  /** The serialised session (Node's `session` event), base64. */
  ticket: string;
}

/** One endpoint's file: its addresses' sessions, and what it is for (checked on reading: a file copied under another name is not taken). */
interface EndpointFile {
  v: 2;
  /** A hash of the endpoint's name and port and the trust (see identityOf). */
  identity: string;
  sessions: Record<string, StoredSession>;
}

/**
 * Sessions in one directory (by default $XDG_CACHE_HOME/s3x/tls-sessions),
 * a small JSON file per endpoint name, port and trust (what verified the
 * sessions: the --ca-bundle's text, or Node's root store of this Node).
 *
 * What a kept session is worth to whoever reads it: it lets them resume a
 * TLS connection to that server, which authenticates nothing at S3 (every
 * request is signed with the secret key), and only TLS 1.3 sessions are kept,
 * whose resumption still makes a fresh key exchange, so recorded traffic stays
 * secret. Whoever can write the directory could plant a session that makes s3x
 * trust a server it would refuse; so the directory and its files must be the
 * user's own and closed to others (0700, 0600, no symbolic links), as
 * ~/.aws/credentials should be, or nothing in them is used.
 */
export class FileTlsSessionStore implements TlsSessionStore {
  /** Each endpoint's file as read once by this process, by its identity (identityOf). */
  private readonly files = new Map<string, EndpointFile>();
  private usable: boolean | undefined;

  constructor(
    private readonly dir: string,
    /** What verified the sessions kept here (see trustOf): sessions verified otherwise are never offered. */
    private readonly trust: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** What another thread needs to open this same store (a data-plane worker: its connections then resume these sessions too). */
  get location(): KeptSessionsLocation {
    return { dir: this.dir, trust: this.trust };
  }

  load(serverName: string, address: string, port: number): KeptSession | undefined {
    const kept = this.fileOf(serverName, port)?.sessions[address];
    if (!kept) return undefined;
    const now = this.now();
    const ageMs = now - kept.at;
    const sinceVerified = now - kept.verifiedAt;
    if (!(ageMs >= 0 && sinceVerified >= ageMs && sinceVerified < TLS_SESSION_MAX_AGE_MS)) return undefined;
    return { session: Buffer.from(kept.ticket, "base64"), ageMs, verifiedAt: kept.verifiedAt };
  }

  save(serverName: string, address: string, port: number, session: Buffer, verifiedAt?: number): void {
    const file = this.fileOf(serverName, port);
    if (!file) return;
    const now = this.now();
    file.sessions[address] = { at: now, verifiedAt: Math.min(verifiedAt ?? now, now), ticket: session.toString("base64") };
    const newestFirst = Object.entries(file.sessions).sort((a, b) => b[1].at - a[1].at);
    file.sessions = Object.fromEntries(newestFirst.slice(0, MAX_ADDRESSES));
    this.write(file);
  }

  forget(serverName: string, address: string, port: number): void {
    const file = this.fileOf(serverName, port);
    if (!file?.sessions[address]) return;
    delete file.sessions[address];
    this.write(file);
  }

  describe(): string {
    return this.directoryUsable()
      ? `TLS sessions kept between runs in ${this.dir}`
      : `TLS sessions not kept: ${this.dir} cannot be made, or is not this user's own directory closed to others (0700)`;
  }

  /** The endpoint's file, read at first use; undefined when the directory is not fit to use. */
  private fileOf(serverName: string, port: number): EndpointFile | undefined {
    if (!this.directoryUsable()) return undefined;
    const identity = this.identityOf(serverName, port);
    let file = this.files.get(identity);
    if (!file) {
      const read = readOwnFile(this.pathOf(identity));
      file = read?.identity === identity ? read : { v: 2, identity, sessions: {} };
      this.files.set(identity, file);
    }
    return file;
  }

  /**
   * Replaces the endpoint's file with this process's view of it: a cache,
   * so two processes writing at once lose one's update, and a write that
   * fails (disk full, read-only home) costs the next run a full handshake.
   */
  private write(file: EndpointFile): void {
    const path = this.pathOf(file.identity);
    // Unique across hosts sharing an NFS home, and created here or not at all ("wx").
    const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    let created = false;
    try {
      writeFileSync(temporary, JSON.stringify(file), { mode: 0o600, flag: "wx" });
      created = true;
      renameSync(temporary, path);
    } catch {
      if (created) unlinkQuietly(temporary);
    }
  }

  private pathOf(identity: string): string {
    return join(this.dir, `${identity.slice(0, 32)}.json`);
  }

  /** What a file is for, as a hash (the file names no endpoint): the endpoint's name and port, and the trust its sessions were verified under. */
  private identityOf(serverName: string, port: number): string {
    return createHash("sha256").update(`${serverName.toLowerCase()}:${port}\0${this.trust}`).digest("hex");
  }

  /** Whether the directory is (or could be made) the user's own, closed to others. */
  private directoryUsable(): boolean {
    if (this.usable !== undefined) return this.usable;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const stat = lstatSync(this.dir);
      this.usable = stat.isDirectory() && ownedAndPrivate(stat);
    } catch {
      this.usable = false;
    }
    return this.usable;
  }
}

/** A file of the user's own, closed to others, not a link; undefined if it is anything else or not a store file. */
function readOwnFile(path: string): EndpointFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || !ownedAndPrivate(stat) || stat.size > 1 << 20) return undefined;
    const parsed = JSON.parse(readFileSync(fd, "utf8")) as Partial<EndpointFile>;
    if (parsed.v !== 2 || typeof parsed.identity !== "string" || typeof parsed.sessions !== "object" || parsed.sessions === null) return undefined;
    const sessions: Record<string, StoredSession> = {};
    for (const [address, kept] of Object.entries(parsed.sessions)) {
      if (typeof kept?.at === "number" && typeof kept.verifiedAt === "number" && typeof kept.ticket === "string") {
        sessions[address] = { at: kept.at, verifiedAt: kept.verifiedAt, ticket: kept.ticket };
      }
    }
    return { v: 2, identity: parsed.identity, sessions };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Owned by this user and neither readable nor writable by anyone else. */
function ownedAndPrivate(stat: { uid: number; mode: number }): boolean {
  const uid = process.getuid?.();
  return (uid === undefined || stat.uid === uid) && (stat.mode & 0o077) === 0;
}

/**
 * What verified the sessions of a run, as a store keys them: the CA bundle's
 * text, or Node's root store (fixed per Node release, or OpenSSL's with
 * --use-openssl-ca, which SSL_CERT_FILE and SSL_CERT_DIR move) with NODE_EXTRA_CA_CERTS.
 */
export function trustOf(ca: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const openssl = `node ${process.version} openssl ${process.versions.openssl}`;
  if (ca !== undefined) return `${openssl} ca-bundle ${createHash("sha256").update(ca).digest("hex")}`;
  const storeFlags = [...process.execArgv, env.NODE_OPTIONS ?? ""].join(" ").match(/--use-(openssl|bundled|system)-ca/g)?.join(",") ?? "";
  const opensslStore = `${storeFlags} ${env.SSL_CERT_FILE ?? ""} ${env.SSL_CERT_DIR ?? ""}`;
  const extra = env.NODE_EXTRA_CA_CERTS;
  let extraState = "";
  if (extra) {
    try {
      const stat = statSync(extra);
      extraState = `${extra} ${stat.size} ${stat.mtimeMs}`;
    } catch {
      extraState = `${extra} missing`;
    }
  }
  return `${openssl} node-roots ${extraState} ${opensslStore}`;
}
