import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { runS3x, sha256 } from "../support/cli.js";
import { freshBucket, objectHash, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startDropResponseProxy, type DropResponseProxy } from "../support/drop-response-proxy.js";

const MiB = 1024 * 1024;

/**
 * A multipart S3→S3 copy (UploadPartCopy) meets lost answers as an upload
 * does (test/integration/upload-safety.test.ts): it creates and completes its
 * upload through the same code (engine/multipart-commit.ts). Every run goes
 * through the drop-response proxy (a named fake: it loses one answer on
 * request) in front of the real radosgw.
 */
describe("copy safety: lost answers to a multipart copy's Create and Complete (integration, real radosgw)", function () {
  this.timeout(300_000);
  let s3: TestS3;
  let bucket: string;
  let proxy: DropResponseProxy;
  const data = randomBytes(12 * MiB);

  before(async function () {
    s3 = await testS3();
    bucket = await freshBucket(s3, "copysafe");
    proxy = await startDropResponseProxy(s3.host, s3.port);
    await putTestObject(s3, bucket, "src/big.bin", data);
  });

  after(async () => proxy?.close());

  const copy = (key: string) =>
    runS3x(["cp", `s3://${bucket}/src/big.bin`, `s3://${bucket}/${key}`, "--copy-threshold", "5MiB", "--part-size", "5MiB", "--endpoint-url", proxy.endpoint], { env: s3.env });
  const uploadsOf = async (key: string): Promise<string[]> => {
    const out = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
    return (out.Uploads ?? []).filter((u) => u.Key === key).map((u) => u.UploadId ?? "");
  };

  it("a lost CreateMultipartUpload answer: the upload it made is aborted, none is left behind", async () => {
    proxy.dropNext("CreateMultipartUpload");
    const before = proxy.dropped;
    const res = await copy("dst/create.bin");
    assert.equal(proxy.dropped, before + 1, "the proxy lost one Create answer");
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await objectHash(s3, bucket, "dst/create.bin"), sha256(data));
    assert.deepEqual(await uploadsOf("dst/create.bin"), [], "no orphaned upload");
  });

  it("a lost CompleteMultipartUpload answer, the retry answered NoSuchUpload: the copy is checked (HEAD, multipart ETag) and accepted, exit 0", async () => {
    proxy.dropNext("CompleteMultipartUpload", 1, { thenNoSuchUpload: true });
    const before = proxy.dropped;
    const res = await copy("dst/complete.bin");
    assert.equal(proxy.dropped, before + 1, "the proxy lost one Complete answer");
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await objectHash(s3, bucket, "dst/complete.bin"), sha256(data));
    assert.deepEqual(await uploadsOf("dst/complete.bin"), []);
  });
});
