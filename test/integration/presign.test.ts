import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { runS3x, sha256 } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

describe("s3x presign (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "presign");
  });

  it("prints a URL that GETs the object without credentials", async () => {
    const data = randomBytes(70_000);
    const key = "dir/a key+ünï (1).bin";
    await putTestObject(s3, bucket, key, data);
    const res = await s3x(["presign", `s3://${bucket}/${key}`, "--expires-in", "600"]);
    assert.equal(res.code, 0, res.stderr);
    const url = res.stdout.toString().trim();
    assert.match(url, /X-Amz-Expires=600/);
    assert.match(url, /X-Amz-Signature=[0-9a-f]{64}/);
    const answer = await fetch(url);
    assert.equal(answer.status, 200);
    assert.equal(sha256(Buffer.from(await answer.arrayBuffer())), sha256(data));
  });

  it("defaults to an hour, and the server refuses the URL once changed", async () => {
    await putTestObject(s3, bucket, "b.bin", Buffer.from("b"));
    const res = await s3x(["presign", `s3://${bucket}/b.bin`]);
    assert.equal(res.code, 0, res.stderr);
    const url = res.stdout.toString().trim();
    assert.match(url, /X-Amz-Expires=3600/);
    const tampered = url.replace("X-Amz-Expires=3600", "X-Amz-Expires=7200");
    const answer = await fetch(tampered);
    assert.equal(answer.status, 403);
    await answer.arrayBuffer();
  });

  it("refuses an expiry beyond 7 days or below 1 s, and a prefix", async () => {
    for (const bad of ["604801", "0"]) {
      const res = await s3x(["presign", `s3://${bucket}/b.bin`, "--expires-in", bad]);
      assert.equal(res.code, 2);
      assert.match(res.stderr, /--expires-in must be a whole number of seconds from 1 to 604800/);
    }
    const prefix = await s3x(["presign", `s3://${bucket}`]);
    assert.equal(prefix.code, 2);
  });
});
