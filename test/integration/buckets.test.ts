import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { CreateMultipartUploadCommand, HeadBucketCommand, ListBucketsCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { runS3x } from "../support/cli.js";
import { testS3, type TestS3 } from "../support/s3-server.js";

describe("s3x mb / rb (integration, real radosgw)", () => {
  let s3: TestS3;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });
  const exists = async (bucket: string): Promise<boolean> =>
    ((await s3.client.send(new ListBucketsCommand({}))).Buckets ?? []).some((b) => b.Name === bucket);
  const newName = (): string => `mb-${randomBytes(5).toString("hex")}`;

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
  });

  it("mb creates a bucket and prints make_bucket; rb removes the empty bucket", async () => {
    const bucket = newName();
    const made = await s3x(["mb", `s3://${bucket}`]);
    assert.equal(made.code, 0, made.stderr);
    assert.equal(made.stdout.toString(), `make_bucket: ${bucket}\n`);
    await s3.client.send(new HeadBucketCommand({ Bucket: bucket }));
    const removed = await s3x(["rb", `s3://${bucket}/`]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout.toString(), `remove_bucket: ${bucket}\n`);
    assert.equal(await exists(bucket), false);
  });

  it("rb refuses a bucket that holds objects, and keeps it and them", async () => {
    const bucket = newName();
    assert.equal((await s3x(["mb", `s3://${bucket}`])).code, 0);
    await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: "keep/me.bin", Body: randomBytes(100) }));
    const res = await s3x(["rb", `s3://${bucket}`]);
    assert.equal(res.code, 1);
    assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
    assert.match(res.stderr, /is not empty: delete its objects first, or use rb --force/);
    assert.equal(await exists(bucket), true);
    await s3.client.send(new HeadBucketCommand({ Bucket: bucket }));
  });

  it("rb --force deletes every object and in-progress upload, then the bucket", async () => {
    const bucket = newName();
    assert.equal((await s3x(["mb", `s3://${bucket}`])).code, 0);
    const keys = Array.from({ length: 1_205 }, (_, i) => `d/${String(i).padStart(5, "0")}`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((Key) => s3.client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: "x" }))));
    }
    await s3.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "big/unfinished.bin" }));
    const res = await s3x(["rb", `s3://${bucket}`, "--force"]);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.toString().trim().split("\n");
    // Two listing pages of keys, the upload, then the bucket.
    assert.equal(lines.filter((l) => /^delete: s3:\/\/.+\/d\/\d{5}$/.test(l)).length, keys.length);
    assert.equal(lines.filter((l) => /^delete: s3:\/\/.+\/big\/unfinished\.bin \(upload \S+\)$/.test(l)).length, 1);
    assert.equal(lines.at(-1), `remove_bucket: ${bucket}`);
    assert.equal(await exists(bucket), false);
  });

  it("mb of a bucket name the server refuses, or of an object URL, fails with one line", async () => {
    const invalid = await s3x(["mb", "s3://Not_A_Valid_Bucket"]);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /^s3x: mb s3:\/\/Not_A_Valid_Bucket: CreateBucket s3:\/\/Not_A_Valid_Bucket: InvalidBucketName: the bucket name is not valid \(HTTP 400\)\n$/);
    const object = await s3x(["mb", "s3://some-bucket/some/key"]);
    assert.equal(object.code, 2);
    assert.match(object.stderr, /mb takes a bucket, not an object: "s3:\/\/some-bucket\/some\/key" \(did you mean s3:\/\/some-bucket\?\)\n$/);
    const local = await s3x(["rb", "./dir"]);
    assert.equal(local.code, 2);
    assert.match(local.stderr, /rb needs an s3:\/\/bucket URL, got "\.\/dir"/);
  });

  it("rb of a bucket that does not exist fails with one line", async () => {
    const res = await s3x(["rb", `s3://${newName()}`]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^s3x: rb s3:\/\/\S+: DeleteBucket s3:\/\/\S+: NoSuchBucket: the bucket does not exist \(HTTP 404\)\n$/);
  });
});
