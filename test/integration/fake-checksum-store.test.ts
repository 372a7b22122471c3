import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type ChecksumType,
} from "@aws-sdk/client-s3";
import type { FinalizeHandler, FinalizeHandlerArguments, HttpRequest, MetadataBearer } from "@smithy/types";
import { Crc32cJs } from "@aws-sdk/checksums/crc";
import { checksumHasher, FakeChecksumStore, type ChecksumAlgorithm } from "../support/fake-checksum-store.js";
import { freshBucket, objectExists, objectHash, testS3, type TestS3 } from "../support/s3-server.js";

const MiB = 1024 * 1024;

/** base64 of a checksum, computed by the fake's own (independent) implementation. */
async function checksum(algorithm: ChecksumAlgorithm, data: Buffer): Promise<string> {
  const h = checksumHasher(algorithm);
  h.update(data);
  return (await h.digest()).toString("base64");
}

/** The S3 error code of a rejected promise. */
async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).name;
  }
  return "(no error)";
}

// This file tests the fake itself, through the AWS SDK (not s3x).
describe("FakeChecksumStore (test fake in front of real radosgw)", function () {
  let s3: TestS3;
  let fake: FakeChecksumStore;
  let client: S3Client;
  let bucket: string;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "fcs");
    fake = await new FakeChecksumStore(s3).start();
    client = fakeClient();
  });

  /** An SDK client pointed at the fake (which forwards to radosgw). */
  const fakeClient = (): S3Client =>
    new S3Client({
      endpoint: fake.url,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });

  /** A client whose requests are edited just before signing, to send what this SDK never would. */
  function editingClient(edit: (request: HttpRequest) => void): S3Client {
    const c = fakeClient();
    c.middlewareStack.addRelativeTo(
      (next: FinalizeHandler<object, MetadataBearer>) => async (args: FinalizeHandlerArguments<object>) => {
        edit(args.request as HttpRequest);
        return next(args);
      },
      { relation: "before", toMiddleware: "httpSigningMiddleware" },
    );
    return c;
  }

  after(async () => {
    client?.destroy();
    await fake?.close();
  });

  it("computes the reference vectors with its independent implementations", async () => {
    const data = Buffer.from("123456789");
    assert.equal((await checksumHasher("CRC32").digest()).toString("hex"), "00000000");
    assert.equal(Buffer.from(await checksum("CRC32", data), "base64").toString("hex"), "cbf43926");
    assert.equal(Buffer.from(await checksum("CRC32C", data), "base64").toString("hex"), "e3069283");
    assert.equal(Buffer.from(await checksum("CRC64NVME", data), "base64").toString("hex"), "ae8b14860a799888");
    assert.equal(await checksum("SHA256", data), createHash("sha256").update(data).digest("base64"));
  });

  it("verifies PutObject checksums, records good ones and returns them with ChecksumMode", async () => {
    const body = randomBytes(3000);
    const good = await checksum("CRC32C", body);
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: "put/good", Body: body, ChecksumCRC32C: good }));
    assert.deepEqual(fake.checksumOf(bucket, "put/good"), { algorithm: "CRC32C", type: "FULL_OBJECT", claimed: good, actual: good });

    // Twice each: reading must not consume the recorded value.
    for (let i = 0; i < 2; i++) {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "put/good", ChecksumMode: "ENABLED" }));
      assert.equal(head.ChecksumCRC32C, good);
      assert.equal(head.ChecksumType, "FULL_OBJECT");
      const get = await client.send(new GetObjectCommand({ Bucket: bucket, Key: "put/good", ChecksumMode: "ENABLED" }));
      assert.equal(get.ChecksumCRC32C, good);
      assert.deepEqual(Buffer.from(await get.Body!.transformToByteArray()), body);
    }
    const plain = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "put/good" }));
    assert.equal(plain.ChecksumCRC32C, undefined, "no checksum without ChecksumMode");

    const wrong = await checksum("CRC32C", Buffer.from("something else"));
    assert.equal(await errorCode(client.send(new PutObjectCommand({ Bucket: bucket, Key: "put/bad", Body: body, ChecksumCRC32C: wrong }))), "BadDigest");
    assert.equal(await objectExists(s3, bucket, "put/bad"), false);
    // A bad overwrite leaves the old object and its checksum alone.
    assert.equal(await errorCode(client.send(new PutObjectCommand({ Bucket: bucket, Key: "put/good", Body: randomBytes(10), ChecksumCRC32C: wrong }))), "BadDigest");
    assert.equal(await objectHash(s3, bucket, "put/good"), createHash("sha256").update(body).digest("hex"));
    assert.equal(fake.checksumOf(bucket, "put/good")?.actual, good);

    // An overwrite without a checksum forgets it.
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: "put/good", Body: body }));
    assert.equal(fake.checksumOf(bucket, "put/good"), undefined);
  });

  it("returns no whole-object checksum for a partial range", async () => {
    const body = randomBytes(1000);
    const sum = await checksum("CRC64NVME", body);
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: "range", Body: body, ChecksumCRC64NVME: sum }));
    const part = await client.send(new GetObjectCommand({ Bucket: bucket, Key: "range", Range: "bytes=10-99", ChecksumMode: "ENABLED" }));
    assert.equal(part.ChecksumCRC64NVME, undefined);
    assert.equal((await part.Body!.transformToByteArray()).length, 90);
    const all = await client.send(new GetObjectCommand({ Bucket: bucket, Key: "range", Range: "bytes=0-999", ChecksumMode: "ENABLED" }));
    assert.equal(all.ChecksumCRC64NVME, sum);
    await all.Body!.transformToByteArray();
    // A copy keeps the checksum (recomputed from the copy).
    await client.send(new CopyObjectCommand({ Bucket: bucket, Key: "range-copy", CopySource: `${bucket}/range` }));
    assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "range-copy", ChecksumMode: "ENABLED" }))).ChecksumCRC64NVME, sum);
  });

  /** A 3-part multipart upload (5 MiB, 5 MiB, 1 KiB) claiming `claimed` for the whole object. */
  async function multipart(key: string, data: Buffer, type: ChecksumType, claimed?: string, c = client): Promise<string> {
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ChecksumAlgorithm: "CRC32C", ChecksumType: type }));
    const bounds = [0, 5 * MiB, 10 * MiB, data.length];
    const parts = [];
    for (let n = 1; n < bounds.length; n++) {
      const body = data.subarray(bounds[n - 1], bounds[n]);
      const ChecksumCRC32C = await checksum("CRC32C", body);
      const out = await client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: n, Body: body, ChecksumCRC32C }));
      parts.push({ PartNumber: n, ETag: out.ETag, ChecksumCRC32C });
    }
    await c.send(new CompleteMultipartUploadCommand({
      Bucket: bucket, Key: key, UploadId, ChecksumCRC32C: claimed, ChecksumType: claimed ? type : undefined, MultipartUpload: { Parts: parts },
    }));
    return UploadId!;
  }

  it("checks the claimed FULL_OBJECT checksum of a multipart upload against the stored bytes", async () => {
    const data = randomBytes(10 * MiB + 1024);
    const crc = new Crc32cJs();
    crc.update(data);
    const full = Buffer.from(await crc.digest()).toString("base64");

    const uploadId = await multipart("mpu/full", data, "FULL_OBJECT", full);
    assert.deepEqual(fake.checksumOf(bucket, "mpu/full"), { algorithm: "CRC32C", type: "FULL_OBJECT", claimed: full, actual: full });
    assert.deepEqual(fake.partChecksums(uploadId).map((p) => [p.partNumber, p.length]), [[1, 5 * MiB], [2, 5 * MiB], [3, 1024]]);
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "mpu/full", ChecksumMode: "ENABLED" }));
    assert.equal(head.ChecksumCRC32C, full);
    assert.equal(head.ChecksumType, "FULL_OBJECT");

    const wrong = await checksum("CRC32C", data.subarray(1));
    assert.equal(await errorCode(multipart("mpu/wrong", data, "FULL_OBJECT", wrong)), "BadDigest");
    assert.equal(await objectExists(s3, bucket, "mpu/wrong"), false, "a rejected object must not remain");
    assert.equal(fake.checksumOf(bucket, "mpu/wrong"), undefined);

    // The claim may also come as a top-level element of the Complete body instead of the header.
    const inBody = editingClient((r) => {
      const value = r.headers["x-amz-checksum-crc32c"];
      if (r.method !== "POST" || r.query?.uploadId === undefined || value === undefined) return;
      delete r.headers["x-amz-checksum-crc32c"];
      r.body = String(r.body).replace(/<CompleteMultipartUpload[^>]*>/, (open) => `${open}<ChecksumCRC32C>${value}</ChecksumCRC32C>`);
      r.headers["content-length"] = String(Buffer.byteLength(r.body));
    });
    try {
      assert.equal(await errorCode(multipart("mpu/body-wrong", data, "FULL_OBJECT", wrong, inBody)), "BadDigest");
      assert.equal(await objectExists(s3, bucket, "mpu/body-wrong"), false);
      await multipart("mpu/body-good", data, "FULL_OBJECT", full, inBody);
      assert.equal(fake.checksumOf(bucket, "mpu/body-good")?.claimed, full);
    } finally {
      inBody.destroy();
    }
  });

  it("computes a COMPOSITE checksum from the parts and returns a part's own", async () => {
    const data = randomBytes(10 * MiB + 1024);
    const uploadId = await multipart("mpu/composite", data, "COMPOSITE");
    const parts = fake.partChecksums(uploadId);
    const expected = `${await checksum("CRC32C", Buffer.concat(parts.map((p) => Buffer.from(p.checksum, "base64"))))}-3`;
    assert.deepEqual(fake.checksumOf(bucket, "mpu/composite"), { algorithm: "CRC32C", type: "COMPOSITE", actual: expected });
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "mpu/composite", ChecksumMode: "ENABLED" }));
    assert.equal(head.ChecksumCRC32C, expected);
    assert.equal(head.ChecksumType, "COMPOSITE");
    const part2 = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "mpu/composite", PartNumber: 2, ChecksumMode: "ENABLED" }));
    assert.equal(part2.ChecksumCRC32C, parts[1].checksum);
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: "mpu/composite", PartNumber: 3, ChecksumMode: "ENABLED" }));
    assert.equal(got.ChecksumCRC32C, parts[2].checksum);
    assert.deepEqual(Buffer.from(await got.Body!.transformToByteArray()), data.subarray(10 * MiB));
  });

  it("flips exactly one byte of the GET bodies that cover the corrupted offset", async () => {
    const body = randomBytes(1000);
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: "corrupt", Body: body, ChecksumCRC32C: await checksum("CRC32C", body) }));
    const get = async (Range?: string): Promise<Buffer> =>
      Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: "corrupt", Range }))).Body!.transformToByteArray());
    const diff = (a: Buffer, b: Buffer): number[] => [...a].flatMap((x, i) => (x === b[i] ? [] : [i]));

    fake.corrupt({ bucket, key: "corrupt", offset: 100 });
    const bad = await get();
    assert.deepEqual(diff(bad, body), [100]);
    assert.equal(bad[100], body[100] ^ 0x01);
    assert.equal(fake.corruptionsApplied, 1);
    assert.deepEqual(await get(), body, "only the next read is corrupted");

    // Ranges: one that misses the offset leaves it pending; the next covering one takes it.
    fake.corrupt({ bucket, key: "corrupt", offset: 600, times: 2 });
    assert.deepEqual(await get("bytes=0-99"), body.subarray(0, 100));
    assert.deepEqual(diff(await get("bytes=500-699"), body.subarray(500, 700)), [100]);
    assert.equal(fake.corruptionsApplied, 2);
    // The SDK's own validation sees the second one when asked to check.
    const checked = await client.send(new GetObjectCommand({ Bucket: bucket, Key: "corrupt", ChecksumMode: "ENABLED" }));
    await assert.rejects(checked.Body!.transformToByteArray(), /checksum/i);
    assert.equal(fake.corruptionsApplied, 3);
    assert.deepEqual(await get(), body);
  });

  it("can refuse DeleteObjects without a correct Content-MD5", async () => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: "del/a", Body: "a", ChecksumCRC32C: await checksum("CRC32C", Buffer.from("a")) }));
    const del = (c: S3Client) => c.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: "del/a" }] } }));
    fake.requireContentMd5OnDeleteObjects(true);
    try {
      // This SDK sends a CRC32 checksum, not Content-MD5, on DeleteObjects.
      assert.equal(await errorCode(del(client)), "InvalidRequest");
      assert.deepEqual(fake.deleteObjects, { refused: 1, accepted: 0 });
      assert.equal(await objectExists(s3, bucket, "del/a"), true);

      const withMd5 = editingClient((r) => (r.headers["content-md5"] = createHash("md5").update(String(r.body)).digest("base64")));
      await del(withMd5);
      withMd5.destroy();
      assert.deepEqual(fake.deleteObjects, { refused: 1, accepted: 1 });
      assert.equal(await objectExists(s3, bucket, "del/a"), false);
      assert.equal(fake.checksumOf(bucket, "del/a"), undefined, "deleting forgets the checksum");
    } finally {
      fake.requireContentMd5OnDeleteObjects(false);
    }
  });

  it("logs the requests it forwarded", () => {
    const puts = fake.requests.filter((r) => r.method === "PUT" && r.path === `/${bucket}/put/good`);
    assert.ok(puts.length >= 3);
    assert.ok(puts.some((r) => r.status === 400) && puts.some((r) => r.status === 200));
  });
});
