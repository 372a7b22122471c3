/**
 * What aws-quiet scripts expect, side by side with aws-cli 2.9 (issue #38,
 * point 6): no line for an upload from stdin, the file's mtime stored by a
 * single-file upload as by recursive ones, presign of `bucket/key`.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { runS3x } from "../support/cli.js";
import { freshBucket, objectExists, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { awsCliFor, ensureAwsCliInstalled, type AwsCli } from "./aws-cli.js";

describe("aws-quiet output: s3x prints what aws-cli prints (real radosgw)", function () {
  let s3: TestS3;
  let aws: AwsCli;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[], stdin?: Buffer) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env, cwd: dir, stdin });

  before(async function () {
    this.timeout(300_000);
    ensureAwsCliInstalled((line) => process.stderr.write(`  [aws-cli] ${line}\n`));
    s3 = await testS3();
    aws = awsCliFor(s3);
    bucket = await freshBucket(s3, "quiet");
    dir = await mkdtemp(join(tmpdir(), "s3x-quiet-"));
  });

  after(async () => {
    await aws?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("an upload from stdin prints nothing on stdout, as aws-cli", async () => {
    const data = Buffer.from("from a pipe\n");
    const theirs = await aws.s3(["cp", "-", `s3://${bucket}/stdin-aws.txt`], dir, data);
    assert.equal(theirs.code, 0, theirs.stderr);
    const ours = await s3x(["cp", "-", `s3://${bucket}/stdin-s3x.txt`], data);
    assert.equal(ours.code, 0, ours.stderr.toString());
    assert.equal(ours.stdout.toString(), theirs.stdout);
    assert.equal(ours.stdout.toString(), "");
    assert.ok(await objectExists(s3, bucket, "stdin-s3x.txt"));
  });

  it("a single-file upload stores the file's mtime, as a recursive one does", async () => {
    const file = join(dir, "dated.txt");
    await writeFile(file, "dated\n");
    const mtime = new Date("2024-03-04T05:06:07.250Z");
    await utimes(file, mtime, mtime);
    const single = await s3x(["cp", "dated.txt", `s3://${bucket}/single/dated.txt`]);
    assert.equal(single.code, 0, single.stderr.toString());
    const recursive = await s3x(["cp", "--recursive", ".", `s3://${bucket}/recursive/`, "--exclude", "*", "--include", "dated.txt"]);
    assert.equal(recursive.code, 0, recursive.stderr.toString());
    const metaOf = async (key: string) => (await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).Metadata ?? {};
    const expected = (mtime.getTime() / 1000).toFixed(3);
    assert.equal((await metaOf("recursive/dated.txt")).mtime, expected);
    assert.equal((await metaOf("single/dated.txt")).mtime, expected);
  });

  it("presign --no-sign-request prints the object's plain URL, as aws-cli", async () => {
    const theirs = await aws.s3(["presign", `s3://${bucket}/signed/plain.txt`, "--no-sign-request"], dir);
    assert.equal(theirs.code, 0, theirs.stderr);
    const ours = await s3x(["presign", `s3://${bucket}/signed/plain.txt`, "--no-sign-request"]);
    assert.equal(ours.code, 0, ours.stderr.toString());
    assert.equal(ours.stdout.toString(), theirs.stdout);
  });

  it("presign takes bucket/key without s3://, as aws-cli", async () => {
    await putTestObject(s3, bucket, "signed/k.txt", Buffer.from("signed\n"));
    const theirs = await aws.s3(["presign", `${bucket}/signed/k.txt`], dir);
    assert.equal(theirs.code, 0, theirs.stderr);
    const ours = await s3x(["presign", `${bucket}/signed/k.txt`]);
    assert.equal(ours.code, 0, ours.stderr.toString());
    const url = ours.stdout.toString().trim();
    assert.match(url, new RegExp(`/${bucket}/signed/k\\.txt\\?`));
    const answer = await fetch(url);
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), "signed\n");
  });
});
