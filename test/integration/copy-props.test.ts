import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { runS3x } from "../support/cli.js";
import { freshBucket, objectExists, testS3, type TestS3 } from "../support/s3-server.js";

const MiB = 1024 * 1024;
/** What the sources carry: every property aws-cli's --copy-props default keeps. */
const SOURCE_PROPS = [
  "--content-type", "text/x-old",
  "--cache-control", "max-age=60",
  "--content-disposition", "inline",
  "--content-encoding", "identity",
  "--content-language", "de",
  "--expires", "2030-01-02T03:04:05Z",
  "--metadata", "owner=ann,team=ml",
];

/**
 * S3→S3 copies that set some attributes keep the source's others, as
 * aws-cli's --copy-props default does (a HEAD of the source, then REPLACE
 * with the source's properties merged with the given ones), through the
 * real CLI against radosgw.
 */
describe("S3→S3 copies keep the properties not given (--copy-props, integration, real radosgw)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });
  const head = (key: string) => s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  const put = async (key: string, size: number) => {
    const path = join(dir, key.replace(/\//g, "_"));
    await writeFile(path, randomBytes(size));
    const res = await s3x(["cp", path, `s3://${bucket}/${key}`, "--multipart-threshold", "5MiB", "--part-size", "5MiB", ...SOURCE_PROPS]);
    assert.equal(res.code, 0, res.stderr);
  };
  /** The destination carries the source's properties except those in `changed`. */
  const assertProps = async (key: string, changed: { contentType?: string; cacheControl?: string; metadata?: Record<string, string> } = {}) => {
    const h = await head(key);
    assert.equal(h.ContentType, changed.contentType ?? "text/x-old", `${key}: Content-Type`);
    assert.equal(h.CacheControl, changed.cacheControl ?? "max-age=60", `${key}: Cache-Control`);
    assert.equal(h.ContentDisposition, "inline", `${key}: Content-Disposition`);
    assert.equal(h.ContentEncoding, "identity", `${key}: Content-Encoding`);
    assert.equal(h.ContentLanguage, "de", `${key}: Content-Language`);
    assert.equal(h.Expires?.toISOString(), "2030-01-02T03:04:05.000Z", `${key}: Expires`);
    // The sources are uploads, which also store their file's mtime (x-amz-meta-mtime): a copy keeps it with the rest.
    const { mtime, ...metadata } = h.Metadata ?? {};
    assert.deepEqual(metadata, changed.metadata ?? { owner: "ann", team: "ml" }, `${key}: metadata`);
    if (!changed.metadata) assert.match(mtime ?? "", /^\d+\.\d{3}$/, `${key}: the source's mtime metadata`);
  };

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "copyprops");
    dir = await mkdtemp(join(tmpdir(), "s3x-copyprops-"));
    await put("src.txt", 1000);
    await put("big.bin", 6 * MiB);
    await put("tree/a.txt", 1000);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("cp --content-type alone keeps the metadata, Cache-Control and the other headers", async () => {
    const res = await s3x(["cp", `s3://${bucket}/src.txt`, `s3://${bucket}/c/type.txt`, "--content-type", "text/x-new"]);
    assert.equal(res.code, 0, res.stderr);
    await assertProps("c/type.txt", { contentType: "text/x-new" });
  });

  it("cp --metadata alone replaces the metadata and keeps Content-Type and the headers", async () => {
    const res = await s3x(["cp", `s3://${bucket}/src.txt`, `s3://${bucket}/c/meta.txt`, "--metadata", "owner=bob"]);
    assert.equal(res.code, 0, res.stderr);
    await assertProps("c/meta.txt", { metadata: { owner: "bob" } });
  });

  it("mv --cache-control alone keeps the rest, and removes the source", async () => {
    assert.equal((await s3x(["cp", `s3://${bucket}/src.txt`, `s3://${bucket}/m/from.txt`])).code, 0);
    const res = await s3x(["mv", `s3://${bucket}/m/from.txt`, `s3://${bucket}/m/to.txt`, "--cache-control", "no-store"]);
    assert.equal(res.code, 0, res.stderr);
    await assertProps("m/to.txt", { cacheControl: "no-store" });
    assert.equal(await objectExists(s3, bucket, "m/from.txt"), false);
  });

  it("a multipart copy (above --copy-threshold) and a recursive copy keep them too", async () => {
    const parts = await s3x(["cp", `s3://${bucket}/big.bin`, `s3://${bucket}/c/big.bin`, "--copy-threshold", "5MiB", "--part-size", "5MiB", "--content-type", "text/x-new"]);
    assert.equal(parts.code, 0, parts.stderr);
    await assertProps("c/big.bin", { contentType: "text/x-new" });
    const tree = await s3x(["cp", `s3://${bucket}/tree/`, `s3://${bucket}/r/`, "--recursive", "--content-type", "text/x-new"]);
    assert.equal(tree.code, 0, tree.stderr);
    await assertProps("r/a.txt", { contentType: "text/x-new" });
  });

  it("--copy-props none keeps only what is given; --metadata-directive turns --copy-props off; a bad value is one line", async () => {
    const none = await s3x(["cp", `s3://${bucket}/src.txt`, `s3://${bucket}/c/none.txt`, "--copy-props", "none", "--content-type", "text/x-new"]);
    assert.equal(none.code, 0, none.stderr);
    const h = await head("c/none.txt");
    assert.equal(h.ContentType, "text/x-new");
    assert.equal(h.CacheControl, undefined);
    assert.deepEqual(h.Metadata ?? {}, {});
    const copied = await s3x(["cp", `s3://${bucket}/src.txt`, `s3://${bucket}/c/copied.txt`, "--copy-props", "none", "--metadata-directive", "COPY"]);
    assert.equal(copied.code, 0, copied.stderr);
    await assertProps("c/copied.txt");
    const bad = await s3x(["cp", `s3://${bucket}/src.txt`, `s3://${bucket}/c/bad.txt`, "--copy-props", "tags"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /^s3x: cp \S+ \S+: --copy-props must be none, metadata-directive, default, got "tags"\n$/);
    assert.equal(await objectExists(s3, bucket, "c/bad.txt"), false);
  });
});
