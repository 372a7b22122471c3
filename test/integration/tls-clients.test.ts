import assert from "node:assert/strict";
import { join } from "node:path";
import { fileHash, randomFile, runS3x } from "../support/cli.js";
import { objectExists, objectHash, openUploads, type TestS3 } from "../support/s3-server.js";
import { startTlsTestSetup, type TlsFront, type TlsTestSetup } from "../support/tls-front.js";

const MiB = 1024 * 1024;

/** The --debug line net/http1 prints for each TLS connection it opens. */
const OWN_TLS_CONNECTION = /s3x: debug: 127\.0\.0\.1:\d+: TLS connection of s3x's HTTP\/1\.1 client \(TLSv1\.[23], (full handshake|session resumed), ALPN (http\/1\.1|none)\)/;

/**
 * s3x's HTTP/1.1 client over TLS (net/http1, the one transport), against the
 * real server behind a TLS front with a self-signed certificate. The --debug
 * lines show that s3x's client carried the requests, and that connections
 * after the first resume the TLS session.
 */
describe("TLS endpoints through s3x's HTTP/1.1 client (integration, real radosgw behind a TLS front)", function () {
  let setup: TlsTestSetup;
  let s3: TestS3;
  let front: TlsFront;
  let bucket: string;
  let dir: string;
  /** The test environment without any CA bundle of the machine's. */
  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(120_000);
    setup = await startTlsTestSetup("tls-clients");
    ({ s3, front, bucket, dir, env } = setup);
  });

  after(async () => setup?.close());

  {
    const client = "own";
    const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", front.endpoint], { env });

    it("round-trips a multipart upload and ranged downloads (file, stdout) over TLS with --ca-bundle, on s3x's own connections, resuming the TLS session", async () => {
      const key = `up-${client}.bin`;
      const file = join(dir, key);
      const hash = await randomFile(file, 12 * MiB + 3);
      const common = ["--part-size", "5MiB", "--ca-bundle", front.certFile, "--debug"];
      const up = await s3x(["cp", file, `s3://${bucket}/${key}`, "--multipart-threshold", "5MiB", ...common]);
      assert.equal(up.code, 0, up.stderr);
      assert.equal(await objectHash(s3, bucket, key), hash);
      const back = join(dir, `back-${client}.bin`);
      const down = await s3x(["cp", `s3://${bucket}/${key}`, back, ...common]);
      assert.equal(down.code, 0, down.stderr);
      assert.equal(await fileHash(back), hash);
      const toStdout = await s3x(["cp", `s3://${bucket}/${key}`, "-", ...common]);
      assert.equal(toStdout.code, 0, toStdout.stderr);
      assert.equal(toStdout.stdout.length, 12 * MiB + 3);
      for (const run of [up, down, toStdout]) {
        assert.match(run.stderr, OWN_TLS_CONNECTION, run.stderr);
        // The probe's handshake is the only full one a run needs; the part requests' connections resume its session.
        assert.match(run.stderr, /TLS connection of s3x's HTTP\/1\.1 client \([^)]*session resumed/, run.stderr);
      }
    });

    it(`refuses an untrusted certificate with one line naming --ca-bundle, and uploads nothing`, async () => {
      const key = `refused-${client}.bin`;
      const file = join(dir, key);
      await randomFile(file, 12 * MiB);
      const res = await s3x(["cp", file, `s3://${bucket}/${key}`, "--part-size", "5MiB", "--multipart-threshold", "5MiB"]);
      assert.equal(res.code, 1, res.stderr);
      assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
      assert.match(res.stderr, /self-signed and not trusted \(give it with --ca-bundle/);
      assert.doesNotMatch(res.stderr, /after \d+ attempts/);
      assert.equal(await objectExists(s3, bucket, key), false);
      assert.equal(await openUploads(s3, bucket), 0);
    });

    it(`with --no-verify-ssl, uploads and downloads without checking the certificate`, async () => {
      const key = `unverified-${client}.bin`;
      const file = join(dir, key);
      const hash = await randomFile(file, 6 * MiB + 1);
      const up = await s3x(["cp", file, `s3://${bucket}/${key}`, "--part-size", "5MiB", "--multipart-threshold", "5MiB", "--no-verify-ssl"]);
      assert.equal(up.code, 0, up.stderr);
      const back = join(dir, `unverified-back-${client}.bin`);
      const down = await s3x(["cp", `s3://${bucket}/${key}`, back, "--part-size", "5MiB", "--no-verify-ssl"]);
      assert.equal(down.code, 0, down.stderr);
      assert.equal(await fileHash(back), hash);
    });
  }
});
