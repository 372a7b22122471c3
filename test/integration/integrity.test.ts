import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { fileHash, randomFile, runS3x, sha256, type RunResult } from "../support/cli.js";
import { checksumHasher, FakeChecksumStore, type ChecksumAlgorithm } from "../support/fake-checksum-store.js";
import { freshBucket, objectExists, objectHash, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const MiB = 1024 * 1024;

/** The --json line of a run (stdout for file transfers, stderr when stdout carries data). */
function stats(res: RunResult): Record<string, number> {
  const line = res.stdout.toString().trim().split("\n").pop() || res.stderr.trim().split("\n").pop() || "";
  return JSON.parse(line) as Record<string, number>;
}

async function independentChecksum(algorithm: ChecksumAlgorithm, data: Buffer): Promise<string> {
  const hasher = checksumHasher(algorithm);
  hasher.update(data);
  return (await hasher.digest()).toString("base64");
}

/**
 * Checksums end to end. radosgw 16 neither stores nor returns S3's
 * additional checksums, so these tests put FakeChecksumStore (a named fake:
 * an HTTP proxy that adds AWS's checksum behaviour, computed with CRC code
 * independent of s3x's) in front of the real server. Every byte still lives
 * in radosgw.
 */
describe("integrity: checksums (integration, radosgw behind FakeChecksumStore)", function () {
  let s3: TestS3;
  let fake: FakeChecksumStore;
  let bucket: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    fake = await new FakeChecksumStore(s3).start();
    bucket = await freshBucket(s3, "sum");
    dir = await mkdtemp(join(tmpdir(), "s3x-sum-"));
    env = { ...s3.env, S3X_STATE_DIR: join(dir, "state") };
  });

  after(async () => {
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const viaFake = (args: string[]): string[] => [...args, "--endpoint-url", fake.url];

  for (const algorithm of ["CRC32C", "CRC32", "CRC64NVME", "SHA256"] as ChecksumAlgorithm[]) {
    it(`uploads with --checksum-algorithm ${algorithm}: every part and the whole object check out at the server`, async () => {
      const data = randomBytes(12 * MiB + 4321);
      const src = join(dir, `up-${algorithm}.bin`);
      await writeFile(src, data);
      const multi = await runS3x(viaFake(["cp", src, `s3://${bucket}/multi-${algorithm}`, "--checksum-algorithm", algorithm.toLowerCase(), "--part-size", "5MiB", "--json"]), { env });
      assert.equal(multi.code, 0, multi.stderr);
      const recorded = fake.checksumOf(bucket, `multi-${algorithm}`);
      assert.ok(recorded, "the fake recorded a checksum");
      assert.equal(recorded.algorithm, algorithm);
      if (algorithm === "SHA256") {
        // SHA-256 cannot be combined: S3 makes it a COMPOSITE of the part digests.
        assert.equal(recorded.type, "COMPOSITE");
        assert.match(recorded.actual, /-3$/);
      } else {
        // s3x combined the part CRCs; the fake read the object back and computed it over every byte.
        assert.equal(recorded.type, "FULL_OBJECT");
        assert.equal(recorded.claimed, recorded.actual);
        assert.equal(recorded.actual, await independentChecksum(algorithm, data));
      }
      const single = await runS3x(viaFake(["cp", src, `s3://${bucket}/single-${algorithm}`, "--checksum-algorithm", algorithm, "--multipart-threshold", "64MiB"]), { env });
      assert.equal(single.code, 0, single.stderr);
      assert.equal(fake.checksumOf(bucket, `single-${algorithm}`)?.actual, await independentChecksum(algorithm, data));
      assert.equal(await objectHash(s3, bucket, `multi-${algorithm}`), sha256(data));
    });
  }

  it("sends CRC32C by default to any endpoint that checks it; $S3X_CHECKSUM_ALGORITHM sets another", async () => {
    const src = join(dir, "default.bin");
    await randomFile(src, 3 * MiB);
    const plain = await runS3x(viaFake(["cp", src, `s3://${bucket}/default-none`]), { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(fake.checksumOf(bucket, "default-none")?.algorithm, "CRC32C");
    const configured = await runS3x(viaFake(["cp", src, `s3://${bucket}/default-env`]), { env: { ...env, S3X_CHECKSUM_ALGORITHM: "crc32" } });
    assert.equal(configured.code, 0, configured.stderr);
    assert.equal(fake.checksumOf(bucket, "default-env")?.algorithm, "CRC32");
  });

  it("an S3-compatible server that stores no checksums: --checksum-algorithm is refused after one part (not silently dropped); none uploads", async () => {
    const src = join(dir, "plain.bin");
    const hash = await randomFile(src, 11 * MiB);
    const res = await runS3x(["cp", src, `s3://${bucket}/plain-crc`, "--checksum-algorithm", "CRC32C", "--part-size", "5MiB"], { env });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /the server did not confirm the CRC32C checksum of the first part/);
    assert.equal(await openUploads(s3, bucket), 0);
    const plain = await runS3x(["cp", src, `s3://${bucket}/plain-crc`, "--checksum-algorithm", "none", "--part-size", "5MiB"], { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(await objectHash(s3, bucket, "plain-crc"), hash);
  });

  it("rejects an unknown algorithm with a one-line usage error", async () => {
    const res = await runS3x(["cp", join(dir, "plain.bin"), `s3://${bucket}/x`, "--checksum-algorithm", "md5"], { env });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /^s3x: .*--checksum-algorithm: unknown checksum algorithm "md5"[^\n]*\n$/);
  });

  describe("downloads verify the stored full-object CRC", () => {
    const data = randomBytes(24 * MiB + 17);
    const key = "verified.bin";

    before(async function () {
      this.timeout(60_000);
      const src = join(dir, "verified-src.bin");
      await writeFile(src, data);
      const up = await runS3x(viaFake(["cp", src, `s3://${bucket}/${key}`, "--checksum-algorithm", "CRC32C", "--part-size", "5MiB"]), { env });
      assert.equal(up.code, 0, up.stderr);
    });

    it("ranges cut differently from the upload's parts are combined and checked", async () => {
      const out = join(dir, "v1.bin");
      const res = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, out, "--part-size", "4MiB", "--json"]), { env });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(stats(res).verifiedObjects, 1);
      assert.equal(await fileHash(out), sha256(data));
    });

    it("a byte corrupted in transit once is caught and the object fetched again: the file is right", async () => {
      const out = join(dir, "v2.bin");
      const before = fake.corruptionsApplied;
      fake.corrupt({ bucket, key, offset: 13 * MiB + 5, times: 1 });
      const res = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, out, "--part-size", "4MiB", "--json"]), { env });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(fake.corruptionsApplied, before + 1);
      assert.match(res.stderr, /checksum mismatch: the CRC32C of the downloaded bytes is \S+, S3 stored \S+; fetching it once more/);
      assert.equal(await fileHash(out), sha256(data));
    });

    it("through 2 worker threads: checked from the CRC pieces the workers took; a byte corrupted once is caught and the object fetched again", async () => {
      const out = join(dir, "v-workers.bin");
      const workers = ["--part-size", "4MiB", "--workers", "2", "--concurrency", "2", "--json", "--debug"];
      const ok = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, out, ...workers]), { env });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stderr, /worker thread 1 started/);
      assert.equal(stats(ok).verifiedObjects, 1);
      assert.equal(await fileHash(out), sha256(data));
      const before = fake.corruptionsApplied;
      fake.corrupt({ bucket, key, offset: 17 * MiB + 3, times: 1 });
      const res = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, out, ...workers]), { env });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(fake.corruptionsApplied, before + 1);
      assert.match(res.stderr, /checksum mismatch: the CRC32C of the downloaded bytes is \S+, S3 stored \S+; fetching it once more/);
      assert.equal(await fileHash(out), sha256(data));
    });

    it("corruption that repeats fails the object clearly and leaves no file, after one retry only", async () => {
      const out = join(dir, "v3");
      await mkdir(out);
      const before = fake.corruptionsApplied;
      fake.corrupt({ bucket, key, offset: 20 * MiB, times: 5 });
      const res = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, join(out, "f.bin"), "--part-size", "4MiB"]), { env });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /s3x: .*checksum mismatch: the CRC32C of the downloaded bytes is \S+, S3 stored \S+\n$/);
      assert.equal(fake.corruptionsApplied, before + 2, "fetched twice, not more");
      assert.deepEqual(await readdir(out), [], "no temporary or final file");
      fake.corrupt({ bucket, key, offset: 20 * MiB, times: 0 });
    });

    it("to stdout, where bytes cannot be taken back, a mismatch fails the command", async () => {
      fake.corrupt({ bucket, key, offset: 1 * MiB, times: 1 });
      const res = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, "-", "--part-size", "4MiB"]), { env });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /checksum mismatch/);
    });

    it("a small object read in one GET is checked against the checksum that GET returned", async () => {
      const small = randomBytes(300 * 1024);
      const src = join(dir, "small.bin");
      await writeFile(src, small);
      assert.equal((await runS3x(viaFake(["cp", src, `s3://${bucket}/small.bin`, "--checksum-algorithm", "crc64nvme"]), { env })).code, 0);
      const res = await runS3x(viaFake(["cp", `s3://${bucket}/small.bin`, join(dir, "small.out"), "--json"]), { env });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(stats(res).verifiedObjects, 1);
    });
  });

  it("a COMPOSITE (SHA-256) object: checked when the ranges are its parts, left unchecked otherwise", async () => {
    const data = randomBytes(15 * MiB + 99);
    const src = join(dir, "composite.bin");
    await writeFile(src, data);
    const up = await runS3x(viaFake(["cp", src, `s3://${bucket}/composite.bin`, "--checksum-algorithm", "sha256", "--part-size", "5MiB"]), { env });
    assert.equal(up.code, 0, up.stderr);
    const aligned = await runS3x(viaFake(["cp", `s3://${bucket}/composite.bin`, join(dir, "c1.bin"), "--part-size", "5MiB", "--json"]), { env });
    assert.equal(aligned.code, 0, aligned.stderr);
    assert.equal(stats(aligned).verifiedObjects, 1);
    const cut = await runS3x(viaFake(["cp", `s3://${bucket}/composite.bin`, join(dir, "c2.bin"), "--part-size", "4MiB", "--json"]), { env });
    assert.equal(cut.code, 0, cut.stderr);
    assert.equal(stats(cut).verifiedObjects, 0);
    assert.equal(await fileHash(join(dir, "c2.bin")), sha256(data));
    const out = join(dir, "c3");
    await mkdir(out);
    fake.corrupt({ bucket, key: "composite.bin", offset: 7 * MiB, times: 2 });
    const bad = await runS3x(viaFake(["cp", `s3://${bucket}/composite.bin`, join(out, "f.bin"), "--part-size", "5MiB"]), { env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /\/f\.bin: s3:\/\/\S+\/composite\.bin: checksum mismatch: the SHA256 of the downloaded bytes is \S+-4, S3 stored \S+-4\n$/);
    assert.deepEqual(await readdir(out), []);
  });

  describe("--verify-etag (single-part objects, MD5 ETag; works on radosgw itself)", () => {
    const data = randomBytes(20 * MiB);
    const key = "etag.bin";

    before(async () => {
      await putTestObject(s3, bucket, key, data); // one PUT: the ETag is the MD5 of the bytes
    });

    it("passes on intact bytes, over several ranges", async () => {
      const res = await runS3x(["cp", `s3://${bucket}/${key}`, join(dir, "e1.bin"), "--verify-etag", "--part-size", "4MiB", "--json"], { env });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(stats(res).verifiedObjects, 1);
    });

    it("checks a multi-range download to stdout in order, as it is written", async () => {
      const ok = await runS3x(["cp", `s3://${bucket}/${key}`, "-", "--verify-etag", "--part-size", "4MiB", "--json"], { env });
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(sha256(ok.stdout), sha256(data));
      assert.equal(JSON.parse(ok.stderr.trim().split("\n").pop()!).verifiedObjects, 1);
      fake.corrupt({ bucket, key, offset: 9 * MiB, times: 1 });
      const bad = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, "-", "--verify-etag", "--part-size", "4MiB"]), { env });
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /checksum mismatch: the MD5 of the downloaded bytes/);
    });

    it("catches a corrupted byte the server's own checksums would not", async () => {
      const out = join(dir, "e2");
      await mkdir(out);
      fake.corrupt({ bucket, key, offset: 15 * MiB, times: 2 });
      const res = await runS3x(viaFake(["cp", `s3://${bucket}/${key}`, join(out, "f.bin"), "--verify-etag", "--part-size", "4MiB"]), { env });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /checksum mismatch: the MD5 of the downloaded bytes is [0-9a-f]{32}, the ETag says [0-9a-f]{32}\n$/);
      assert.deepEqual(await readdir(out), []);
    });
  });

  it("DeleteObjects: a server that demands Content-MD5 gets it from the first request on (never refused)", async () => {
    for (let i = 0; i < 5; i++) await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: `del/${i}`, Body: Buffer.from(`x${i}`) }));
    fake.requireContentMd5OnDeleteObjects(true);
    try {
      const before = { ...fake.deleteObjects };
      const res = await runS3x(viaFake(["rm", `s3://${bucket}/del/`, "--recursive"]), { env });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(fake.deleteObjects.refused, before.refused, "never refused: Content-MD5 rides on every DeleteObjects");
      assert.equal(fake.deleteObjects.accepted, before.accepted + 1, "one DeleteObjects for the 5 keys");
      const left = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "del/" }));
      assert.equal(left.KeyCount ?? 0, 0);
    } finally {
      fake.requireContentMd5OnDeleteObjects(false);
    }
  });

  it("checksum objects cost nothing extra when the server stores none: no HEAD for a one-range object", async () => {
    assert.equal(await objectExists(s3, bucket, "plain-crc"), true);
    const res = await runS3x(["cp", `s3://${bucket}/plain-crc`, join(dir, "p.out"), "--part-size", "16MiB", "--json"], { env });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(stats(res).requests, 1);
    assert.equal(await openUploads(s3, bucket), 0);
  });
});
