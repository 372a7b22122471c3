import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileTlsSessionStore, TLS_SESSION_MAX_AGE_MS, trustOf } from "../../../src/net/tls-session-store.js";

/** TLS sessions kept between runs: what is offered, under which trust, and what is refused as not the user's own. */
describe("net/tls-session-store: TLS sessions kept between runs", () => {
  let root: string;
  let dir: string;
  const ticket = Buffer.from("a serialised TLS session");

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "s3x-tls-store-"));
    dir = join(root, "s3x", "tls-sessions");
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("gives the next run (a new store on the same directory) the session kept for that name, address and port only", () => {
    new FileTlsSessionStore(dir, "trust-a").save("s3.example", "10.0.0.1", 443, ticket);
    const next = new FileTlsSessionStore(dir, "trust-a");
    assert.deepEqual(next.load("s3.example", "10.0.0.1", 443)?.session, ticket);
    assert.deepEqual(next.load("S3.Example", "10.0.0.1", 443)?.session, ticket, "names compare without case");
    assert.equal(next.load("s3.example", "10.0.0.2", 443), undefined, "another address");
    assert.equal(next.load("s3.example", "10.0.0.1", 8443), undefined, "another port");
    assert.equal(next.load("other.example", "10.0.0.1", 443), undefined, "another name");
  });

  it("never offers a session verified under another trust (CA bundle, Node release, NODE_EXTRA_CA_CERTS)", () => {
    const bundleA = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    const bundleB = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n";
    new FileTlsSessionStore(dir, trustOf(bundleA, {})).save("s3.example", "10.0.0.1", 443, ticket);
    assert.deepEqual(new FileTlsSessionStore(dir, trustOf(bundleA, {})).load("s3.example", "10.0.0.1", 443)?.session, ticket);
    assert.equal(new FileTlsSessionStore(dir, trustOf(bundleB, {})).load("s3.example", "10.0.0.1", 443), undefined);
    assert.equal(new FileTlsSessionStore(dir, trustOf(undefined, {})).load("s3.example", "10.0.0.1", 443), undefined);
    const extra = join(root, "extra.pem");
    writeFileSync(extra, bundleA);
    assert.notEqual(trustOf(undefined, { NODE_EXTRA_CA_CERTS: extra }), trustOf(undefined, {}));
  });

  it("keeps the directory and its files closed to others (0700, 0600)", () => {
    new FileTlsSessionStore(dir, "t").save("s3.example", "10.0.0.1", 443, ticket);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const files = readdirSync(dir);
    assert.equal(files.length, 1, "one file per endpoint, no temporary file left");
    assert.equal(statSync(join(dir, files[0])).mode & 0o777, 0o600);
    assert.ok(!readFileSync(join(dir, files[0]), "utf8").includes("s3.example"), "the file is named by a hash, and names no endpoint");
  });

  it("uses nothing in a directory or file others could write, or behind a symbolic link", () => {
    new FileTlsSessionStore(dir, "t").save("s3.example", "10.0.0.1", 443, ticket);
    const file = join(dir, readdirSync(dir)[0]);
    chmodSync(file, 0o644);
    assert.equal(new FileTlsSessionStore(dir, "t").load("s3.example", "10.0.0.1", 443), undefined, "a file others may read");
    chmodSync(file, 0o600);
    chmodSync(dir, 0o755);
    assert.equal(new FileTlsSessionStore(dir, "t").load("s3.example", "10.0.0.1", 443), undefined, "a directory others may enter");
    const open = new FileTlsSessionStore(dir, "t");
    open.save("s3.example", "10.0.0.9", 443, ticket);
    chmodSync(dir, 0o700);
    assert.equal(new FileTlsSessionStore(dir, "t").load("s3.example", "10.0.0.9", 443), undefined, "nothing written into a directory others may enter");
    // A file planted as a link to one the user owns (a session kept elsewhere) is not followed.
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    new FileTlsSessionStore(elsewhere, "t").save("s3.example", "10.0.0.1", 443, ticket);
    rmSync(file);
    symlinkSync(join(elsewhere, readdirSync(elsewhere)[0]), file);
    assert.equal(new FileTlsSessionStore(dir, "t").load("s3.example", "10.0.0.1", 443), undefined, "a symbolic link");
  });

  it("offers no session older than the age limit, ignores a damaged file, and forgets what the server refused", () => {
    let now = 1_000_000;
    new FileTlsSessionStore(dir, "t", () => now).save("s3.example", "10.0.0.1", 443, ticket);
    now += TLS_SESSION_MAX_AGE_MS - 1;
    assert.deepEqual(new FileTlsSessionStore(dir, "t", () => now).load("s3.example", "10.0.0.1", 443)?.session, ticket);
    now += 2;
    assert.equal(new FileTlsSessionStore(dir, "t", () => now).load("s3.example", "10.0.0.1", 443), undefined);
    const store = new FileTlsSessionStore(dir, "t");
    store.save("s3.example", "10.0.0.1", 443, ticket);
    store.forget("s3.example", "10.0.0.1", 443);
    assert.equal(new FileTlsSessionStore(dir, "t").load("s3.example", "10.0.0.1", 443), undefined);
    writeFileSync(join(dir, readdirSync(dir)[0]), "{not json", { mode: 0o600 });
    assert.equal(new FileTlsSessionStore(dir, "t").load("s3.example", "10.0.0.1", 443), undefined);
  });

  it("counts the age limit from the full handshake that checked the certificate, however often the session was renewed since", () => {
    let now = 1_000_000;
    const verifiedAt = now;
    now += TLS_SESSION_MAX_AGE_MS - 60_000;
    // A ticket from a resumed connection, kept a moment ago, inherits its line's check time.
    new FileTlsSessionStore(dir, "t", () => now).save("s3.example", "10.0.0.1", 443, ticket, verifiedAt);
    const kept = new FileTlsSessionStore(dir, "t", () => now).load("s3.example", "10.0.0.1", 443);
    assert.equal(kept?.verifiedAt, verifiedAt);
    assert.equal(kept?.ageMs, 0);
    now += 60_000;
    assert.equal(new FileTlsSessionStore(dir, "t", () => now).load("s3.example", "10.0.0.1", 443), undefined, "12 hours after the certificate was checked");
  });

  it("takes no file made for another endpoint or trust, even under this one's name", () => {
    new FileTlsSessionStore(dir, "t").save("other.example", "10.0.0.1", 443, ticket);
    const other = join(dir, readdirSync(dir)[0]);
    new FileTlsSessionStore(dir, "t").save("s3.example", "10.0.0.2", 443, ticket);
    const mine = readdirSync(dir).map((name) => join(dir, name)).find((path) => path !== other)!;
    copyFileSync(other, mine);
    assert.equal(new FileTlsSessionStore(dir, "t").load("s3.example", "10.0.0.1", 443), undefined);
  });

  it("keeps the 16 addresses of an endpoint seen last", () => {
    let now = 1_000_000;
    const store = new FileTlsSessionStore(dir, "t", () => now);
    for (let i = 1; i <= 20; i++) {
      now += 1000;
      store.save("s3.example", `10.0.0.${i}`, 443, Buffer.from(`ticket ${i}`));
    }
    const next = new FileTlsSessionStore(dir, "t", () => now);
    assert.equal(next.load("s3.example", "10.0.0.4", 443), undefined);
    assert.deepEqual(next.load("s3.example", "10.0.0.5", 443)?.session, Buffer.from("ticket 5"));
    assert.deepEqual(next.load("s3.example", "10.0.0.20", 443)?.session, Buffer.from("ticket 20"));
  });
});
