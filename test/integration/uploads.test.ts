import assert from "node:assert/strict";
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { runS3x } from "../support/cli.js";
import { freshBucket, testS3, type TestS3 } from "../support/s3-server.js";

describe("s3x ls --uploads / rm --uploads (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });
  const uploadKeys = async (): Promise<string[]> =>
    ((await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).map((u) => u.Key!).sort();

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "uploads");
    for (const key of ["ckpt/a.bin", "ckpt/b.bin", "other/c.bin"]) await s3.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  });

  it("lists the in-progress uploads under a prefix", async () => {
    const res = await s3x(["ls", "--uploads", `s3://${bucket}/ckpt/`]);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.toString().trim().split("\n");
    assert.equal(lines.length, 2);
    assert.match(lines[0], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ckpt\/a\.bin \S+$/);
  });

  it("aborts only uploads older than --older-than, and nothing on --dryrun", async () => {
    const young = await s3x(["rm", "--uploads", `s3://${bucket}/ckpt/`, "--older-than", "1h"]);
    assert.equal(young.code, 0, young.stderr);
    assert.deepEqual(await uploadKeys(), ["ckpt/a.bin", "ckpt/b.bin", "other/c.bin"]);
    const dry = await s3x(["rm", "--uploads", `s3://${bucket}/ckpt/`, "--dryrun"]);
    assert.equal(dry.stdout.toString().trim().split("\n").filter((l) => l.startsWith("(dryrun) delete: ")).length, 2);
    assert.deepEqual(await uploadKeys(), ["ckpt/a.bin", "ckpt/b.bin", "other/c.bin"]);
  });

  it("aborts every upload under the prefix and leaves the others", async () => {
    const res = await s3x(["rm", "--uploads", `s3://${bucket}/ckpt/`]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await uploadKeys(), ["other/c.bin"]);
  });

  it("refuses --older-than without --uploads", async () => {
    const res = await s3x(["rm", `s3://${bucket}/x`, "--older-than", "1d"]);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--older-than goes with --uploads/);
  });
});
