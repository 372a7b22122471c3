import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { runS3x, sha256 } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { PRECONDITION_FAILED_XML, startRecordingProxy, type RecordedRequest, type RecordingProxy } from "../support/recording-proxy.js";

/** CopyObject or UploadPartCopy pinned to the source's ETag. */
const isConditionalCopy = (req: RecordedRequest): boolean => req.method === "PUT" && req.headers["x-amz-copy-source-if-match"] !== undefined;

describe("S3→S3 copy against a server that answers 412 to every conditional copy (integration, real radosgw behind a fake proxy)", () => {
  let s3: TestS3;
  let bucket: string;
  let proxy: RecordingProxy;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", proxy.endpoint], { env: s3.env });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "precond");
    proxy = await startRecordingProxy(s3.host, s3.port);
  });
  after(async () => proxy?.close());
  beforeEach(() => {
    proxy.requests.length = 0;
    proxy.answered.length = 0;
    proxy.answer = (req) => (isConditionalCopy(req) ? { status: 412, body: PRECONDITION_FAILED_XML } : undefined);
  });

  it("copies one object again without the condition when a fresh HEAD shows the source unchanged, and says so", async () => {
    const data = randomBytes(300_000);
    await putTestObject(s3, bucket, "src/one.bin", data);
    const res = await s3x(["cp", `s3://${bucket}/src/one.bin`, `s3://${bucket}/dst/one.bin`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(proxy.answered.length, 1, "the conditional copy was refused once");
    assert.equal(res.stderr.split("\n").filter((l) => /unchanged/.test(l) && /without the condition/.test(l)).length, 1, res.stderr);
    assert.equal(await objectHash(s3, bucket, "dst/one.bin"), sha256(data));
  });

  it("copies a multipart copy's parts again without the condition when the source is unchanged", async () => {
    const data = randomBytes(12 * 1024 * 1024);
    await putTestObject(s3, bucket, "src/big.bin", data);
    const res = await s3x(["cp", `s3://${bucket}/src/big.bin`, `s3://${bucket}/dst/big.bin`, "--copy-threshold", "5MiB", "--part-size", "5MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(proxy.answered.length >= 1, "some part copy was refused");
    assert.match(res.stderr, /without the condition/);
    assert.equal(await objectHash(s3, bucket, "dst/big.bin"), sha256(data));
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("still reports a source that really changed, and copies nothing", async () => {
    await putTestObject(s3, bucket, "src/moving.bin", randomBytes(1000));
    proxy.answer = async (req) => {
      if (!isConditionalCopy(req)) return undefined;
      // The source is replaced between s3x's HEAD and its copy.
      await putTestObject(s3, bucket, "src/moving.bin", randomBytes(1000));
      return { status: 412, body: PRECONDITION_FAILED_XML };
    };
    const res = await s3x(["cp", `s3://${bucket}/src/moving.bin`, `s3://${bucket}/dst/moving.bin`]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /the object changed during the transfer/);
    assert.doesNotMatch(res.stderr, /without the condition/);
    assert.equal(await objectExists(s3, bucket, "dst/moving.bin"), false);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "src/moving.bin" }));
    assert.ok(head.ETag);
  });
});
