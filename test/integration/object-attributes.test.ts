import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectAclCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { fileHash, runS3x, sha256 } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, openUploads, testS3, type TestS3 } from "../support/s3-server.js";
import { startRecordingProxy, type RecordingProxy } from "../support/recording-proxy.js";
import { TEST_KMS_KEY_ID } from "../support/radosgw.js";

const HEADERS = ["--cache-control", "max-age=60", "--content-encoding", "gzip", "--content-disposition", 'attachment; filename="w.bin"', "--content-language", "de", "--expires", "2030-01-02T03:04:05Z"];
/** A 32-byte SSE-C key (aws-cli takes the key's bytes as typed). */
const SSE_C_KEY = "0123456789abcdef0123456789abcdef";
const OTHER_SSE_C_KEY = "fedcba9876543210fedcba9876543210";

describe("object attributes: headers, ACL, encryption, request payer (integration, real radosgw; headers radosgw cannot show through a recording proxy)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let proxy: RecordingProxy;
  const s3x = (args: string[], stdin?: Buffer) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env, stdin });
  const viaProxy = (args: string[], stdin?: Buffer) => runS3x([...args, "--endpoint-url", proxy.endpoint], { env: s3.env, stdin });
  const head = (key: string) => s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  const file = async (name: string, size: number) => {
    const path = join(dir, name);
    await writeFile(path, randomBytes(size));
    return path;
  };
  const assertHeaders = async (key: string) => {
    const h = await head(key);
    assert.equal(h.CacheControl, "max-age=60");
    assert.equal(h.ContentEncoding, "gzip");
    assert.equal(h.ContentDisposition, 'attachment; filename="w.bin"');
    assert.equal(h.ContentLanguage, "de");
    assert.equal(h.Expires?.toISOString(), "2030-01-02T03:04:05.000Z");
  };

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "attrs");
    dir = await mkdtemp(join(tmpdir(), "s3x-attrs-"));
    proxy = await startRecordingProxy(s3.host, s3.port);
  });
  after(async () => proxy?.close());
  beforeEach(() => (proxy.requests.length = 0));

  it("sets Cache-Control, Content-Encoding/-Disposition/-Language and Expires on single and multipart uploads, and from stdin", async () => {
    const small = await file("small.bin", 1000);
    const big = await file("big.bin", 6 * 1024 * 1024);
    for (const [src, key] of [[small, "h/small.bin"], [small, "h/small2.bin"], [big, "h/big.bin"]]) {
      const res = await s3x(["cp", src, `s3://${bucket}/${key}`, "--multipart-threshold", "5MiB", "--part-size", "5MiB", ...HEADERS]);
      assert.equal(res.code, 0, res.stderr);
      await assertHeaders(key);
    }
    const piped = await s3x(["cp", "-", `s3://${bucket}/h/stdin.bin`, ...HEADERS], randomBytes(2000));
    assert.equal(piped.code, 0, piped.stderr);
    await assertHeaders("h/stdin.bin");
  });

  it("S3→S3: copies the source's headers (COPY, one request or in parts), or replaces them (--metadata-directive REPLACE)", async () => {
    for (const extra of [[], ["--copy-threshold", "5MiB", "--part-size", "5MiB"]]) {
      const kept = await s3x(["cp", `s3://${bucket}/h/big.bin`, `s3://${bucket}/c/kept${extra.length}.bin`, ...extra]);
      assert.equal(kept.code, 0, kept.stderr);
      await assertHeaders(`c/kept${extra.length}.bin`);
    }
    const replaced = await s3x(["cp", `s3://${bucket}/h/small.bin`, `s3://${bucket}/c/replaced.bin`, "--metadata-directive", "REPLACE", "--cache-control", "no-store"]);
    assert.equal(replaced.code, 0, replaced.stderr);
    const h = await head("c/replaced.bin");
    assert.equal(h.CacheControl, "no-store");
    assert.equal(h.ContentEncoding, undefined);
    const recursive = await s3x(["cp", `s3://${bucket}/h/`, `s3://${bucket}/r/`, "--recursive", "--cache-control", "max-age=1"]);
    assert.equal(recursive.code, 0, recursive.stderr);
    assert.equal((await head("r/small.bin")).CacheControl, "max-age=1");
  });

  it("sets a canned ACL (--acl public-read) on uploads and copies", async () => {
    const src = await file("acl.bin", 100);
    const res = await s3x(["cp", src, `s3://${bucket}/acl/a.bin`, "--acl", "public-read"]);
    assert.equal(res.code, 0, res.stderr);
    const copy = await s3x(["cp", `s3://${bucket}/acl/a.bin`, `s3://${bucket}/acl/b.bin`, "--acl", "public-read"]);
    assert.equal(copy.code, 0, copy.stderr);
    for (const key of ["acl/a.bin", "acl/b.bin"]) {
      const acl = await s3.client.send(new GetObjectAclCommand({ Bucket: bucket, Key: key }));
      assert.ok(acl.Grants?.some((g) => g.Grantee?.URI === "http://acs.amazonaws.com/groups/global/AllUsers" && g.Permission === "READ"), `${key}: ${JSON.stringify(acl.Grants)}`);
    }
  });

  it("SSE-C: uploads (single and multipart) need the key to be read back; downloads with the key get the bytes, without it fail", async () => {
    const small = await file("ssec-small.bin", 3000);
    const big = await file("ssec-big.bin", 6 * 1024 * 1024);
    for (const [src, key] of [[small, "ssec/small.bin"], [big, "ssec/big.bin"]]) {
      const res = await s3x(["cp", src, `s3://${bucket}/${key}`, "--multipart-threshold", "5MiB", "--part-size", "5MiB", "--sse-c", "AES256", "--sse-c-key", SSE_C_KEY]);
      assert.equal(res.code, 0, res.stderr);
      await assert.rejects(head(key), "the object cannot be read without its key");
      const withKey = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key, SSECustomerAlgorithm: "AES256", SSECustomerKey: SSE_C_KEY }));
      assert.equal(withKey.SSECustomerAlgorithm, "AES256");
      const target = join(dir, `${key.replace("/", "-")}.out`);
      const down = await s3x(["cp", `s3://${bucket}/${key}`, target, "--sse-c", "AES256", "--sse-c-key", SSE_C_KEY]);
      assert.equal(down.code, 0, down.stderr);
      assert.equal(await fileHash(target), await fileHash(src));
    }
    const noKey = await s3x(["cp", `s3://${bucket}/ssec/small.bin`, join(dir, "nokey.out")]);
    assert.equal(noKey.code, 1);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("SSE-C copies: the source's key on HEAD and as x-amz-copy-source-…, the destination's on the copy (headers through the proxy: radosgw 16 cannot copy SSE-C objects)", async () => {
    const md5 = (key: string) => createHash("md5").update(key).digest("base64");
    const b64 = (key: string) => Buffer.from(key).toString("base64");
    // The fake answers CopyObject itself (radosgw 16 answers 501 to copies of SSE-C objects).
    proxy.answer = (req) => (req.method === "PUT" && req.headers["x-amz-copy-source"] && !/partNumber=/.test(req.path) ? { status: 200, body: '<CopyObjectResult><ETag>"0"</ETag></CopyObjectResult>' } : undefined);
    try {
      const ssec = ["--sse-c-copy-source", "AES256", "--sse-c-copy-source-key", SSE_C_KEY, "--sse-c", "AES256", "--sse-c-key", OTHER_SSE_C_KEY];
      const single = await viaProxy(["cp", `s3://${bucket}/ssec/big.bin`, `s3://${bucket}/ssec/copied.bin`, ...ssec]);
      assert.equal(single.code, 0, single.stderr);
      // In parts: radosgw refuses UploadPartCopy of an SSE-C source (501); the headers sent are what counts, and nothing is left open.
      await viaProxy(["cp", `s3://${bucket}/ssec/big.bin`, `s3://${bucket}/ssec/copied-parts.bin`, "--copy-threshold", "5MiB", "--part-size", "5MiB", ...ssec]);
    } finally {
      proxy.answer = () => undefined;
    }
    const heads = proxy.requests.filter((r) => r.method === "HEAD");
    assert.ok(heads.length >= 1);
    for (const h of heads) assert.equal(h.headers["x-amz-server-side-encryption-customer-key"], b64(SSE_C_KEY), "the source is read with its key");
    const copies = proxy.requests.filter((r) => r.method === "PUT" && r.headers["x-amz-copy-source"]);
    assert.ok(copies.length >= 2, JSON.stringify(proxy.requests.map((r) => `${r.method} ${r.path}`)));
    for (const c of copies) {
      assert.equal(c.headers["x-amz-copy-source-server-side-encryption-customer-algorithm"], "AES256");
      assert.equal(c.headers["x-amz-copy-source-server-side-encryption-customer-key"], b64(SSE_C_KEY));
      assert.equal(c.headers["x-amz-copy-source-server-side-encryption-customer-key-md5"], md5(SSE_C_KEY));
      assert.equal(c.headers["x-amz-server-side-encryption-customer-key"], b64(OTHER_SSE_C_KEY));
      assert.equal(c.headers["x-amz-server-side-encryption-customer-key-md5"], md5(OTHER_SSE_C_KEY));
    }
    const create = proxy.requests.find((r) => r.method === "POST" && /[?&]uploads/.test(r.path));
    assert.equal(create?.headers["x-amz-server-side-encryption-customer-key"], b64(OTHER_SSE_C_KEY));
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("SSE-KMS: --sse aws:kms --sse-kms-key-id stores the object encrypted with that key", async () => {
    const src = await file("kms.bin", 4000);
    const res = await s3x(["cp", src, `s3://${bucket}/kms/a.bin`, "--sse", "aws:kms", "--sse-kms-key-id", TEST_KMS_KEY_ID]);
    assert.equal(res.code, 0, res.stderr);
    const h = await head("kms/a.bin");
    assert.equal(h.ServerSideEncryption, "aws:kms");
    assert.equal(h.SSEKMSKeyId, TEST_KMS_KEY_ID);
  });

  it("sends x-amz-server-side-encryption AES256 on PUT, CreateMultipartUpload and CopyObject, and x-amz-request-payer on every request", async () => {
    const small = await file("sse.bin", 1000);
    const big = await file("sse-big.bin", 6 * 1024 * 1024);
    const common = ["--sse", "AES256", "--request-payer", "requester", "--multipart-threshold", "5MiB", "--part-size", "5MiB"];
    await viaProxy(["cp", small, `s3://${bucket}/sse/small.bin`, ...common]);
    await viaProxy(["cp", small, `s3://${bucket}/sse/small2.bin`, ...common]);
    await viaProxy(["cp", big, `s3://${bucket}/sse/big.bin`, ...common]);
    await viaProxy(["cp", `s3://${bucket}/h/small.bin`, `s3://${bucket}/sse/copy.bin`, ...common]);
    // aws-cli takes --request-payer on ls and rm too.
    assert.equal((await viaProxy(["ls", `s3://${bucket}/sse/`, "--request-payer", "requester"])).code, 0);
    assert.equal((await viaProxy(["rm", `s3://${bucket}/sse/small2.bin`, "--request-payer", "requester"])).code, 0);
    assert.ok(proxy.requests.some((r) => r.method === "GET" && /list-type=2/.test(r.path)), "ls went through the proxy");
    assert.ok(proxy.requests.some((r) => r.method === "DELETE"), "rm went through the proxy");
    const writes = proxy.requests.filter((r) => (r.method === "PUT" && !/partNumber=/.test(r.path)) || (r.method === "POST" && /[?&]uploads/.test(r.path)));
    assert.ok(writes.length >= 4, JSON.stringify(proxy.requests.map((r) => `${r.method} ${r.path}`)));
    for (const w of writes) assert.equal(w.headers["x-amz-server-side-encryption"], "AES256", `${w.method} ${w.path}`);
    const parts = proxy.requests.filter((r) => r.method === "PUT" && /partNumber=/.test(r.path));
    assert.ok(parts.length >= 2);
    for (const p of parts) assert.equal(p.headers["x-amz-server-side-encryption"], undefined, "UploadPart carries no SSE header (S3 refuses it)");
    for (const r of proxy.requests) assert.equal(r.headers["x-amz-request-payer"], "requester", `${r.method} ${r.path}`);
  });

  it("--expected-size makes stdin parts large enough for 10,000 parts", async () => {
    const data = randomBytes(12 * 1024 * 1024);
    const res = await viaProxy(["cp", "-", `s3://${bucket}/expected.bin`, "--expected-size", "100GiB"], data);
    assert.equal(res.code, 0, res.stderr);
    const first = proxy.requests.find((r) => r.method === "PUT" && /partNumber=1(&|$)/.test(r.path));
    assert.equal(first?.headers["content-length"], String(11 * 1024 * 1024), "ceil(100 GiB / 10,000) rounded up to whole MiB");
    assert.equal(await objectHash(s3, bucket, "expected.bin"), sha256(data));
  });

  it("refuses bad values with one line and sends nothing", async () => {
    const src = await file("bad.bin", 10);
    const cases: [string[], RegExp][] = [
      [["--acl", "world-writable"], /--acl must be one of private, public-read/],
      [["--sse", "DES"], /--sse must be AES256 or aws:kms/],
      [["--sse-kms-key-id", "k"], /--sse-kms-key-id goes with --sse aws:kms/],
      [["--sse-c", "AES256", "--sse-c-key", "short"], /--sse-c-key must be 32 bytes/],
      [["--sse-c", "AES256"], /--sse-c needs --sse-c-key/],
      [["--expires", "someday"], /--expires "someday" is not a date/],
      [["--request-payer", "owner"], /--request-payer must be requester/],
      [["--metadata-directive", "MERGE"], /--metadata-directive must be COPY or REPLACE/],
      // Not ASCII: it used to be sent and fail with SignatureDoesNotMatch.
      [["--metadata", "k=café"], /--metadata k: S3 metadata can hold only printable ASCII characters/],
      [["--metadata", '{"naïve":"v"}'], /--metadata naïve: S3 metadata can hold only printable ASCII/],
    ];
    for (const [args, message] of cases) {
      const res = await s3x(["cp", src, `s3://${bucket}/bad/x.bin`, ...args]);
      assert.equal(res.code, 2, `${args.join(" ")}: ${res.stderr}`);
      assert.match(res.stderr, message);
      assert.equal(res.stderr.trim().split("\n").length, 1);
    }
    assert.equal(await objectExists(s3, bucket, "bad/x.bin"), false);
  });
});
