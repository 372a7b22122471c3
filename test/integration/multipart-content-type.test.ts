import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { runS3x } from "../support/cli.js";
import { freshBucket, testS3, type TestS3 } from "../support/s3-server.js";
import { startRecordingProxy, type RecordingProxy } from "../support/recording-proxy.js";

/**
 * Multipart uploads must carry the object's Content-Type on
 * CreateMultipartUpload: a server that takes the type of the Complete
 * request (application/xml) would otherwise store that as the object's.
 */
describe("Content-Type of multipart uploads (integration, real radosgw; request headers through a recording proxy)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let proxy: RecordingProxy;
  const s3x = (args: string[], stdin?: Buffer) => runS3x([...args, "--endpoint-url", proxy.endpoint], { env: s3.env, stdin });
  const typeOf = async (key: string) => (await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentType;
  const createTypes = () => proxy.requests.filter((r) => r.method === "POST" && /[?&]uploads(=|&|$)/.test(r.path)).map((r) => r.headers["content-type"]);

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "ctype");
    dir = await mkdtemp(join(tmpdir(), "s3x-ctype-"));
    proxy = await startRecordingProxy(s3.host, s3.port);
  });
  after(async () => proxy?.close());
  beforeEach(() => (proxy.requests.length = 0));

  it("sends application/octet-stream for a file of unknown extension, and the object is stored so", async () => {
    const file = join(dir, "weights.zzunknown");
    await writeFile(file, randomBytes(10 * 1024 * 1024));
    const res = await s3x(["cp", file, `s3://${bucket}/weights.zzunknown`, "--multipart-threshold", "5MiB", "--part-size", "5MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(createTypes(), ["application/octet-stream"]);
    assert.equal(await typeOf("weights.zzunknown"), "application/octet-stream");
  });

  it("sends the type guessed from the file name", async () => {
    const file = join(dir, "table.csv");
    await writeFile(file, randomBytes(10 * 1024 * 1024));
    const res = await s3x(["cp", file, `s3://${bucket}/table.csv`, "--multipart-threshold", "5MiB", "--part-size", "5MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(createTypes(), ["text/csv"]);
    assert.equal(await typeOf("table.csv"), "text/csv");
  });

  it("sends application/octet-stream for stdin, or --content-type when given", async () => {
    const res = await s3x(["cp", "-", `s3://${bucket}/stream.out`, "--part-size", "5MiB"], randomBytes(11 * 1024 * 1024));
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(createTypes(), ["application/octet-stream"]);
    assert.equal(await typeOf("stream.out"), "application/octet-stream");
    proxy.requests.length = 0;
    const typed = await s3x(["cp", "-", `s3://${bucket}/stream.json`, "--part-size", "5MiB", "--content-type", "application/json"], randomBytes(11 * 1024 * 1024));
    assert.equal(typed.code, 0, typed.stderr);
    assert.deepEqual(createTypes(), ["application/json"]);
    assert.equal(await typeOf("stream.json"), "application/json");
  });

  it("gives a multipart S3→S3 copy the source's type", async () => {
    const res = await s3x(["cp", `s3://${bucket}/weights.zzunknown`, `s3://${bucket}/copy.zzunknown`, "--copy-threshold", "5MiB", "--part-size", "5MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await typeOf("copy.zzunknown"), "application/octet-stream");
  });
});
