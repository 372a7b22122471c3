import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmod, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileHash, randomFile, runS3x } from "../support/cli.js";
import { objectExists, objectHash, openUploads, type TestS3 } from "../support/s3-server.js";
import { startTlsTestSetup, type TlsFront, type TlsTestSetup } from "../support/tls-front.js";

const MiB = 1024 * 1024;

const fileHashOf = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/**
 * An https endpoint: the real server behind a TLS front with a self-signed
 * certificate: s3x's own HTTP/1.1 client over TLS with a real handshake,
 * in the main thread and in the data-plane worker threads.
 */
describe("TLS endpoints: --ca-bundle, $AWS_CA_BUNDLE, --no-verify-ssl (integration, real radosgw behind a TLS front)", function () {
  let setup: TlsTestSetup;
  let s3: TestS3;
  let front: TlsFront;
  let bucket: string;
  let dir: string;
  /** The test environment without any CA bundle of the machine's. */
  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(120_000);
    setup = await startTlsTestSetup("tls");
    ({ s3, front, bucket, dir, env } = setup);
  });

  after(async () => setup?.close());

  const s3x = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
    runS3x([...args, "--endpoint-url", front.endpoint], { env: { ...env, ...extraEnv } });

  it("refuses an untrusted certificate with one line naming --ca-bundle, at once, and uploads nothing", async () => {
    const file = join(dir, "refused.bin");
    await randomFile(file, 12 * MiB);
    const res = await s3x(["cp", file, `s3://${bucket}/refused.bin`, "--part-size", "5MiB", "--multipart-threshold", "5MiB"]);
    assert.equal(res.code, 1, res.stderr);
    assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
    assert.match(res.stderr, /self-signed and not trusted \(give it with --ca-bundle/);
    // A certificate problem is not transient: no retries.
    assert.doesNotMatch(res.stderr, /after \d+ attempts/);
    assert.equal(await objectExists(s3, bucket, "refused.bin"), false);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("with --ca-bundle, round-trips a multipart upload and a ranged download over TLS", async () => {
    const file = join(dir, "up.bin");
    const hash = await randomFile(file, 12 * MiB + 3);
    const trust = ["--ca-bundle", front.certFile];
    const up = await s3x(["cp", file, `s3://${bucket}/up.bin`, "--part-size", "5MiB", "--multipart-threshold", "5MiB", ...trust]);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(await objectHash(s3, bucket, "up.bin"), hash);
    const back = join(dir, "back.bin");
    const down = await s3x(["cp", `s3://${bucket}/up.bin`, back, "--part-size", "5MiB", ...trust]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(await fileHash(back), hash);
    const toStdout = await s3x(["cp", `s3://${bucket}/up.bin`, "-", ...trust]);
    assert.equal(toStdout.code, 0, toStdout.stderr);
    assert.equal(toStdout.stdout.length, 12 * MiB + 3);
  });

  it("worker threads make their own TLS context: --ca-bundle and --no-verify-ssl carry over to them (upload, download, stream through --workers 2)", async () => {
    const file = join(dir, "workers.bin");
    const hash = await randomFile(file, 24 * MiB + 5);
    for (const trust of [["--ca-bundle", front.certFile], ["--no-verify-ssl"]]) {
      const flags = ["--part-size", "5MiB", "--multipart-threshold", "5MiB", "--workers", "2", "--concurrency", "2", "--debug", ...trust];
      const up = await s3x(["cp", file, `s3://${bucket}/workers.bin`, ...flags]);
      assert.equal(up.code, 0, up.stderr);
      assert.match(up.stderr, /worker thread 1 started/);
      assert.equal(await objectHash(s3, bucket, "workers.bin"), hash);
      const back = join(dir, "workers-back.bin");
      const down = await s3x(["cp", `s3://${bucket}/workers.bin`, back, ...flags]);
      assert.equal(down.code, 0, down.stderr);
      assert.match(down.stderr, /worker thread 1 started/);
      assert.doesNotMatch(down.stderr, /not trusted|self-signed|[1-9]\d* errors/);
      assert.equal(await fileHash(back), hash);
      const stream = await s3x(["cp", `s3://${bucket}/workers.bin`, "-", ...flags]);
      assert.equal(stream.code, 0, stream.stderr);
      assert.equal(stream.stdout.length, 24 * MiB + 5);
    }
  });

  it("takes the bundle from $AWS_CA_BUNDLE, as aws-cli does", async () => {
    const res = await s3x(["ls", `s3://${bucket}/`], { AWS_CA_BUNDLE: front.certFile });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout.toString(), /up\.bin/);
  });

  it("with --no-verify-ssl, connects without checking the certificate", async () => {
    const res = await s3x(["ls", `s3://${bucket}/`, "--no-verify-ssl"]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout.toString(), /up\.bin/);
  });

  it("a bundle that cannot be read, or holds no certificate, is a usage error naming it, before anything is sent", async () => {
    const missing = await s3x(["ls", `s3://${bucket}/`, "--ca-bundle", join(dir, "nope.pem")]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.equal(missing.stderr.trim().split("\n").length, 1, missing.stderr);
    assert.match(missing.stderr, /--ca-bundle \S*nope\.pem: cannot read it \(ENOENT\)/);
    const junk = join(dir, "junk.pem");
    await writeFile(junk, "not a certificate\n");
    const fromEnv = await s3x(["ls", `s3://${bucket}/`], { AWS_CA_BUNDLE: junk });
    assert.equal(fromEnv.code, 2, fromEnv.stderr);
    assert.match(fromEnv.stderr, /\$AWS_CA_BUNDLE \S*junk\.pem: holds no PEM certificate/);
  });

  it("keeps the TLS session for the next run: a one-object cat resumes it on its first connection; another bundle, S3X_TLS_SESSION_CACHE=off and --no-verify-ssl do not", async () => {
    const cache = join(dir, "tls-sessions");
    const cat = (extra: string[], cacheDir = cache) => s3x(["cat", `s3://${bucket}/up.bin`, "--debug", ...extra], { S3X_TLS_SESSION_CACHE: cacheDir });
    const want = await objectHash(s3, bucket, "up.bin");
    const handshakes = (stderr: string) => [...stderr.matchAll(/TLS connection of s3x's HTTP\/1\.1 client \(TLSv1\.3, (full handshake|session resumed)/g)].map((m) => m[1]);
    const trust = ["--ca-bundle", front.certFile];
    const first = await cat(trust);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(handshakes(first.stderr)[0], "full handshake");
    assert.ok(first.stderr.includes(`s3x: debug: TLS sessions kept between runs in ${cache}\n`), first.stderr);
    assert.equal((await readdir(cache)).length, 1, "one endpoint file kept");
    for (let run = 0; run < 2; run++) {
      const next = await cat(trust);
      assert.equal(next.code, 0, next.stderr);
      assert.equal(fileHashOf(next.stdout), want, "the object, byte for byte");
      assert.equal(handshakes(next.stderr)[0], "session resumed", `run ${run + 2}: its first connection resumed the session an earlier run kept`);
      assert.ok(!handshakes(next.stderr).includes("full handshake"), next.stderr);
    }
    // Another bundle (the same certificate twice): sessions verified under the first one are not offered.
    const other = join(dir, "other-bundle.pem");
    const pem = await readFile(front.certFile, "utf8");
    await writeFile(other, pem + pem);
    const otherTrust = await cat(["--ca-bundle", other]);
    assert.equal(otherTrust.code, 0, otherTrust.stderr);
    assert.equal(handshakes(otherTrust.stderr)[0], "full handshake");
    const off = await cat(trust, "off");
    assert.equal(off.code, 0, off.stderr);
    assert.equal(handshakes(off.stderr)[0], "full handshake");
    assert.match(off.stderr, /s3x: debug: TLS sessions not kept \(S3X_TLS_SESSION_CACHE=off\)/);
    // A directory others may enter is not used, and --debug says so.
    await chmod(cache, 0o755);
    const open = await cat(trust);
    assert.equal(open.code, 0, open.stderr);
    assert.equal(handshakes(open.stderr)[0], "full handshake");
    assert.match(open.stderr, /TLS sessions not kept: \S+ cannot be made, or is not this user's own directory closed to others \(0700\)/);
    await chmod(cache, 0o700);
    const unverified = join(dir, "tls-sessions-unverified");
    const noVerify = await cat(["--no-verify-ssl"], unverified);
    assert.equal(noVerify.code, 0, noVerify.stderr);
    assert.match(noVerify.stderr, /TLS sessions not kept \(--no-verify-ssl\)/);
    assert.equal(fileHashOf(noVerify.stdout), want);
    await assert.rejects(readdir(unverified), "nothing kept from a connection that verified nothing");
  });

  it("worker threads resume the kept TLS session too: no CAs to load, no full handshake in a worker", async () => {
    const cache = join(dir, "tls-sessions-workers");
    const trust = ["--ca-bundle", front.certFile, "--debug"];
    const handshakes = (stderr: string) => [...stderr.matchAll(/(worker thread \d+: )?\S+: TLS connection of s3x's HTTP\/1\.1 client \(TLSv1\.3, (full handshake|session resumed)/g)].map((m) => `${m[1] ? "worker" : "main"} ${m[2]}`);
    const first = await s3x(["cat", `s3://${bucket}/up.bin`, ...trust], { S3X_TLS_SESSION_CACHE: cache });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(handshakes(first.stderr)[0], "main full handshake", first.stderr);
    // 12 MiB in 5 MiB ranges: the first on the main thread, the other two in the worker.
    const back = join(dir, "back-workers.bin");
    const down = await s3x(["cp", `s3://${bucket}/up.bin`, back, "--part-size", "5MiB", "--workers", "1", ...trust], { S3X_TLS_SESSION_CACHE: cache });
    assert.equal(down.code, 0, down.stderr);
    assert.equal(await fileHash(back), await objectHash(s3, bucket, "up.bin"));
    const seen = handshakes(down.stderr);
    assert.ok(seen.includes("worker session resumed"), down.stderr);
    assert.deepEqual(seen.filter((h) => h.endsWith("full handshake")), [], down.stderr);
  });

  it("a bundle whose certificate is damaged is a usage error naming it", async () => {
    const damaged = join(dir, "damaged.pem");
    await writeFile(damaged, "-----BEGIN CERTIFICATE-----\nMIIBnotbase64atall\n-----END CERTIFICATE-----\n");
    const res = await s3x(["ls", `s3://${bucket}/`, "--ca-bundle", damaged]);
    assert.equal(res.code, 2, res.stderr);
    assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
    assert.match(res.stderr, /--ca-bundle \S*damaged\.pem: not a valid PEM certificate bundle/);
    // OpenSSL would stop at a damaged block without a word, and leave out the certificates after it.
    const laterDamaged = join(dir, "later-damaged.pem");
    await writeFile(laterDamaged, (await readFile(front.certFile, "utf8")) + "-----BEGIN CERTIFICATE-----\nMIIBnotbase64atall\n-----END CERTIFICATE-----\n");
    const later = await s3x(["ls", `s3://${bucket}/`, "--ca-bundle", laterDamaged]);
    assert.equal(later.code, 2, later.stderr);
    assert.match(later.stderr, /later-damaged\.pem: not a valid PEM certificate bundle \(certificate 2 of 2 is damaged\)/);
  });

  it("a plain-HTTP endpoint never reads the bundle", async () => {
    const res = await runS3x(["ls", `s3://${bucket}/`, "--endpoint-url", s3.endpoint], { env: { ...env, AWS_CA_BUNDLE: join(dir, "nope.pem") } });
    assert.equal(res.code, 0, res.stderr);
  });
});
