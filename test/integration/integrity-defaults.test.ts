import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomFile, runS3x, sha256, type RunResult } from "../support/cli.js";
import { checksumHasher, FakeChecksumStore } from "../support/fake-checksum-store.js";
import { startRecordingProxy, type RecordedRequest, type RecordingProxy } from "../support/recording-proxy.js";
import { carriesChecksum, carriesChecksumValue, startChecksumRefusingProxy } from "../support/checksum-refusing-proxy.js";
import { interruptAfterOnePart, startDropResponseProxy } from "../support/drop-response-proxy.js";
import { freshBucket, objectHash, openUploads, testS3, type TestS3 } from "../support/s3-server.js";
import { startTlsFront, type TlsFront } from "../support/tls-front.js";

const MiB = 1024 * 1024;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
const SLOW_DOWN_XML = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';

/** The object-data uploads (PutObject, UploadPart) a proxy saw from index `from` on, in order of arrival. */
function dataUploads(proxy: RecordingProxy, from = 0): RecordedRequest[] {
  return proxy.requests.slice(from).filter((r) => r.method === "PUT" && r.headers["x-amz-copy-source"] === undefined);
}
const isPart = (r: RecordedRequest): boolean => /[?&]partNumber=/.test(r.path);
const payloadHash = (r: RecordedRequest): string => String(r.headers["x-amz-content-sha256"]);
const crc32cOf = (r: RecordedRequest): string | undefined => r.headers["x-amz-checksum-crc32c"] as string | undefined;

function stats(res: RunResult): Record<string, number> {
  return JSON.parse(res.stdout.toString().trim().split("\n").pop() ?? "{}") as Record<string, number>;
}

async function crc32cBase64(data: Buffer): Promise<string> {
  const hasher = checksumHasher("CRC32C");
  hasher.update(data);
  return (await hasher.digest()).toString("base64");
}

/**
 * Integrity at the lowest cost, by default (issue #24): every upload starts
 * with a CRC32C and, over plain HTTP, a signed payload; the first answer
 * tells whether the server checks the CRC. Where it does (AWS; here
 * FakeChecksumStore, a named fake that adds AWS's checksum behaviour in
 * front of radosgw), uploads rely on the CRC and send UNSIGNED-PAYLOAD;
 * where it ignores it (radosgw 16) they keep the signed payload and drop the
 * CRC; where it refuses it (a named refusing fake), the request goes again
 * without it. Over TLS the payload is never hashed. A recording proxy (a
 * relay, not a fake) shows the headers each request carried.
 */
describe("integrity defaults: the cheapest check the server verifies (integration, real radosgw)", function () {
  this.timeout(300_000);
  let s3: TestS3;
  let fake: FakeChecksumStore;
  let bucket: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    s3 = await testS3();
    fake = await new FakeChecksumStore(s3).start();
    closers.push(() => fake.close());
    bucket = await freshBucket(s3, "intdef");
    dir = await mkdtemp(join(tmpdir(), "s3x-intdef-"));
    env = { ...s3.env, S3X_STATE_DIR: join(dir, "state") };
    delete env.AWS_CA_BUNDLE;
    delete env.S3X_CHECKSUM_ALGORITHM;
    delete env.S3X_PAYLOAD_SIGNING;
  });

  after(async () => {
    for (const close of closers.reverse()) await close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const recorder = async (host: string, port: number): Promise<RecordingProxy> => {
    const proxy = await startRecordingProxy(host, port);
    closers.push(() => proxy.close());
    return proxy;
  };
  const tlsFront = async (port: number): Promise<TlsFront> => {
    const front = await startTlsFront("127.0.0.1", port, dir);
    closers.push(() => front.close());
    return front;
  };
  const port = (endpoint: string): number => Number(new URL(endpoint).port);

  it("plain HTTP, a server that ignores checksums (radosgw): the first part probes with CRC32C and a signed payload, the rest keep the signed payload without the CRC, quietly", async () => {
    const proxy = await recorder(s3.host, s3.port);
    const src = join(dir, "ignored.bin");
    const hash = await randomFile(src, 16 * MiB + 5);
    const res = await runS3x(["cp", src, `s3://${bucket}/ignored.bin`, "--part-size", "5MiB", "--json", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stderr, /checksum/, "a default checksum the server ignores is not worth a word");
    assert.equal(stats(res).unconfirmedChecksums, 0);
    const parts = dataUploads(proxy).filter(isPart);
    assert.equal(parts.length, 4);
    for (const part of parts) assert.match(payloadHash(part), HEX_SHA256, "every part's payload is signed");
    assert.ok(crc32cOf(parts[0]!), "the first part carries the CRC32C that asks the server");
    assert.deepEqual(parts.slice(1).map(crc32cOf), [undefined, undefined, undefined], "once ignored, no CRC");
    assert.equal(await objectHash(s3, bucket, "ignored.bin"), hash);

    const small = join(dir, "ignored-small.bin");
    const smallHash = await randomFile(small, 1 * MiB);
    const from = proxy.requests.length;
    const single = await runS3x(["cp", small, `s3://${bucket}/ignored-small.bin`, "--endpoint-url", proxy.endpoint], { env });
    assert.equal(single.code, 0, single.stderr);
    const [put] = dataUploads(proxy, from);
    assert.match(payloadHash(put!), HEX_SHA256);
    assert.ok(crc32cOf(put!), "a single PUT carries the CRC32C too");
    assert.equal(await objectHash(s3, bucket, "ignored-small.bin"), smallHash);
  });

  it("plain HTTP, a server that checks checksums (FakeChecksumStore): after the first answer echoes the CRC32C, uploads go UNSIGNED-PAYLOAD + CRC32C, and the object and its full-object CRC are right", async () => {
    const proxy = await recorder("127.0.0.1", fake.port);
    const data = randomBytes(16 * MiB + 5);
    const src = join(dir, "checked.bin");
    await writeFile(src, data);
    const res = await runS3x(["cp", src, `s3://${bucket}/checked.bin`, "--part-size", "5MiB", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(res.code, 0, res.stderr);
    const parts = dataUploads(proxy).filter(isPart);
    assert.equal(parts.length, 4);
    assert.match(payloadHash(parts[0]!), HEX_SHA256, "until the server has answered, the payload is signed too");
    assert.deepEqual(parts.slice(1).map(payloadHash), ["UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD"], "then the checked CRC replaces the SHA-256");
    for (const part of parts) assert.ok(crc32cOf(part), "every part carries its CRC32C");
    const recorded = fake.checksumOf(bucket, "checked.bin");
    assert.equal(recorded?.algorithm, "CRC32C");
    assert.equal(recorded?.type, "FULL_OBJECT");
    assert.equal(recorded?.claimed, await crc32cBase64(data), "Complete claimed the whole object's CRC32C, which the fake checked");
    assert.equal(recorded?.actual, recorded?.claimed);
    assert.equal(await objectHash(s3, bucket, "checked.bin"), sha256(data));

    // Small files, one PUT each, one at a time: the first one asks, the next ones rely on the CRC.
    const tree = join(dir, "checked-tree");
    await mkdir(tree);
    const files = await Promise.all(["a", "b", "c"].map(async (name) => ({ name, hash: await randomFile(join(tree, name), 256 * 1024 + name.charCodeAt(0)) })));
    const from = proxy.requests.length;
    const many = await runS3x(["cp", tree, `s3://${bucket}/checked-tree/`, "--recursive", "--concurrency", "1", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(many.code, 0, many.stderr);
    const puts = dataUploads(proxy, from);
    assert.equal(puts.length, 3);
    assert.deepEqual(puts.map((p) => (HEX_SHA256.test(payloadHash(p)) ? "signed" : payloadHash(p))), ["signed", "UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD"]);
    for (const put of puts) assert.ok(crc32cOf(put));
    for (const file of files) {
      assert.equal(await objectHash(s3, bucket, `checked-tree/${file.name}`), file.hash);
      assert.equal(fake.checksumOf(bucket, `checked-tree/${file.name}`)?.algorithm, "CRC32C");
    }

    // --payload-signing always still hashes every payload.
    const always = proxy.requests.length;
    const signed = await runS3x(["cp", src, `s3://${bucket}/checked-always.bin`, "--part-size", "5MiB", "--payload-signing", "always", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(signed.code, 0, signed.stderr);
    const signedParts = dataUploads(proxy, always).filter(isPart);
    assert.equal(signedParts.length, 4);
    for (const part of signedParts) {
      assert.match(payloadHash(part), HEX_SHA256);
      assert.ok(crc32cOf(part));
    }
  });

  it("a server that refuses checksum headers (400 InvalidRequest): the default upload succeeds, resent without them, and nothing after the refusal carries one; --checksum-algorithm given fails", async () => {
    const proxy = await startChecksumRefusingProxy(s3.host, s3.port);
    closers.push(() => proxy.close());
    const src = join(dir, "refused.bin");
    const hash = await randomFile(src, 12 * MiB);
    const res = await runS3x(["cp", src, `s3://${bucket}/refused.bin`, "--part-size", "5MiB", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(proxy.answered.length, 1, "one refusal (the CreateMultipartUpload that named the algorithm)");
    const refusedAt = proxy.requests.indexOf(proxy.answered[0]!);
    assert.deepEqual(proxy.requests.slice(refusedAt + 1).filter(carriesChecksum), [], "no checksum header after the refusal");
    const parts = dataUploads(proxy).filter(isPart);
    assert.equal(parts.length, 3);
    for (const part of parts) assert.match(payloadHash(part), HEX_SHA256, "the signed payload protects the parts instead");
    assert.equal(await objectHash(s3, bucket, "refused.bin"), hash);

    const small = join(dir, "refused-small.bin");
    const smallHash = await randomFile(small, 1 * MiB);
    const from = proxy.requests.length;
    const single = await runS3x(["cp", small, `s3://${bucket}/refused-small.bin`, "--endpoint-url", proxy.endpoint], { env });
    assert.equal(single.code, 0, single.stderr);
    const puts = dataUploads(proxy, from);
    assert.deepEqual(puts.map(carriesChecksum), [true, false], "refused with the CRC, stored without it");
    assert.equal(await objectHash(s3, bucket, "refused-small.bin"), smallHash);

    const asked = await runS3x(["cp", src, `s3://${bucket}/refused-asked.bin`, "--part-size", "5MiB", "--checksum-algorithm", "crc32c", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(asked.code, 1, asked.stderr);
    assert.match(asked.stderr, /InvalidRequest/);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("a server that takes the algorithm at Create but refuses the parts' checksum values: the first part is resent without it, the rest go without, the upload succeeds", async () => {
    const proxy = await startChecksumRefusingProxy(s3.host, s3.port, "values");
    closers.push(() => proxy.close());
    const src = join(dir, "refused-parts.bin");
    const hash = await randomFile(src, 16 * MiB);
    const res = await runS3x(["cp", src, `s3://${bucket}/refused-parts.bin`, "--part-size", "5MiB", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(proxy.answered.length, 1, "one refusal: the first part, sent alone");
    assert.ok(isPart(proxy.answered[0]!));
    const refusedAt = proxy.requests.indexOf(proxy.answered[0]!);
    assert.deepEqual(proxy.requests.slice(refusedAt + 1).filter(carriesChecksumValue), [], "no checksum value after the refusal");
    const parts = dataUploads(proxy).filter(isPart);
    assert.equal(parts.length, 5, "4 parts, the refused one twice");
    for (const part of parts) assert.match(payloadHash(part), HEX_SHA256);
    assert.equal(await objectHash(s3, bucket, "refused-parts.bin"), hash);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("--resume with the default checksum continues an upload created without one (as uploads are where the server ignores it)", async () => {
    const proxy = await startDropResponseProxy(s3.host, s3.port);
    closers.push(() => proxy.close());
    const src = join(dir, "resume.bin");
    const hash = await randomFile(src, 15 * MiB);
    const args = ["cp", src, `s3://${bucket}/resume.bin`, "--part-size", "5MiB", "--endpoint-url", proxy.endpoint];
    // Run 1, created without a checksum: one part lands, the rest are held, and s3x is killed there.
    await interruptAfterOnePart(proxy, (onSpawn) => runS3x([...args, "--checksum-algorithm", "none"], { env, onSpawn }));
    const second = await runS3x([...args, "--resume", "--json"], { env });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /resuming upload \S+ of s3:\/\/\S+\/resume\.bin/);
    assert.ok(stats(second).reusedParts >= 1, second.stdout.toString());
    assert.equal(await objectHash(s3, bucket, "resume.bin"), hash);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("every part refused with 503 while the first one probes the checksum: the upload fails with the server's error, exit 1, nothing left", async () => {
    // A FAKE for the parts only (the recording proxy answering them itself): a server that throttles every UploadPart.
    const proxy = await recorder(s3.host, s3.port);
    proxy.answer = (req) => (req.method === "PUT" && /[?&]partNumber=/.test(req.path) ? { status: 503, body: SLOW_DOWN_XML } : undefined);
    const src = join(dir, "throttled.bin");
    await randomFile(src, 24 * MiB);
    const res = await runS3x(["cp", src, `s3://${bucket}/throttled.bin`, "--part-size", "5MiB", "--max-attempts", "2", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(res.code, 1, `exit ${res.code}: ${res.stderr}`);
    assert.match(res.stderr, /UploadPart \d+ of s3:\/\/\S+\/throttled\.bin: SlowDown/);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("HTTPS: UNSIGNED-PAYLOAD always; the CRC32C stays where the server checks it (FakeChecksumStore) and goes after the first part where it does not (radosgw)", async () => {
    for (const server of ["radosgw", "checking"] as const) {
      const proxy = await recorder("127.0.0.1", server === "radosgw" ? s3.port : fake.port);
      const front = await tlsFront(port(proxy.endpoint));
      const data = randomBytes(16 * MiB + 7);
      const src = join(dir, `tls-${server}.bin`);
      await writeFile(src, data);
      const key = `tls-${server}.bin`;
      const res = await runS3x(["cp", src, `s3://${bucket}/${key}`, "--part-size", "5MiB", "--ca-bundle", front.certFile, "--endpoint-url", front.endpoint], { env });
      assert.equal(res.code, 0, res.stderr);
      const parts = dataUploads(proxy).filter(isPart);
      assert.equal(parts.length, 4, server);
      for (const part of parts) assert.equal(payloadHash(part), "UNSIGNED-PAYLOAD", server);
      assert.ok(crc32cOf(parts[0]!), `${server}: the first part asks with a CRC32C`);
      if (server === "checking") {
        for (const part of parts) assert.ok(crc32cOf(part), "every part carries its CRC32C where it is checked");
        assert.equal(fake.checksumOf(bucket, key)?.claimed, await crc32cBase64(data));
      } else {
        assert.deepEqual(parts.slice(1).map(crc32cOf), [undefined, undefined, undefined], "no CRC where it is ignored");
      }
      assert.equal(await objectHash(s3, bucket, key), sha256(data));
    }
  });
});
