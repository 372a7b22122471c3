import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { fileHash, randomFile, runS3x, sha256 } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

describe("s3x mv (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "mv");
    dir = await mkdtemp(join(tmpdir(), "s3x-mv-"));
  });

  it("moves a file to S3 (multipart too): the object is complete, then the file is gone", async () => {
    const file = join(dir, "up.bin");
    const hash = await randomFile(file, 7 * 1024 * 1024);
    const res = await s3x(["mv", file, `s3://${bucket}/up/up.bin`, "--multipart-threshold", "5MiB", "--part-size", "5MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /moved/);
    assert.equal(await objectHash(s3, bucket, "up/up.bin"), hash);
    assert.equal(existsSync(file), false);
  });

  it("moves an object to a file: the file holds the bytes, then the object is gone", async () => {
    const data = randomBytes(100_000);
    await putTestObject(s3, bucket, "down/a.bin", data);
    const target = join(dir, "a.bin");
    const res = await s3x(["mv", `s3://${bucket}/down/a.bin`, target]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await fileHash(target), sha256(data));
    assert.equal(await objectExists(s3, bucket, "down/a.bin"), false);
  });

  it("moves an object to another key (server-side), then deletes the source", async () => {
    const data = randomBytes(50_000);
    await putTestObject(s3, bucket, "s2s/from.bin", data);
    const res = await s3x(["mv", `s3://${bucket}/s2s/from.bin`, `s3://${bucket}/s2s-to/`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await objectHash(s3, bucket, "s2s-to/from.bin"), sha256(data));
    assert.equal(await objectExists(s3, bucket, "s2s/from.bin"), false);
  });

  it("moves a directory recursively with --exclude: excluded files stay, --dryrun changes nothing", async () => {
    const src = join(dir, "tree");
    await mkdir(join(src, "sub"), { recursive: true });
    await writeFile(join(src, "a.txt"), "a");
    await writeFile(join(src, "sub", "b.txt"), "b");
    await writeFile(join(src, "skip.log"), "log");
    const dry = await s3x(["mv", src, `s3://${bucket}/tree/`, "--recursive", "--exclude", "*.log", "--dryrun"]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout.toString().split("\n").filter((l) => l.startsWith("(dryrun) move: ")).length, 2);
    assert.ok(existsSync(join(src, "a.txt")));
    assert.equal(await objectExists(s3, bucket, "tree/a.txt"), false);
    const res = await s3x(["mv", src, `s3://${bucket}/tree/`, "--recursive", "--exclude", "*.log"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(existsSync(join(src, "a.txt")), false);
    assert.equal(existsSync(join(src, "sub", "b.txt")), false);
    assert.equal(await readFile(join(src, "skip.log"), "utf8"), "log");
    assert.ok(await objectExists(s3, bucket, "tree/sub/b.txt"));
    assert.equal(await objectExists(s3, bucket, "tree/skip.log"), false);
  });

  it("moves a prefix to another prefix, and a prefix to a directory, with --include/--exclude", async () => {
    const res = await s3x(["mv", `s3://${bucket}/tree/`, `s3://${bucket}/moved/`, "--recursive"]);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(await objectExists(s3, bucket, "moved/a.txt"));
    assert.ok(await objectExists(s3, bucket, "moved/sub/b.txt"));
    assert.equal(await objectExists(s3, bucket, "tree/a.txt"), false);
    const out = join(dir, "out");
    const down = await s3x(["mv", `s3://${bucket}/moved/`, out, "--recursive", "--exclude", "*", "--include", "sub/*"]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(await readFile(join(out, "sub", "b.txt"), "utf8"), "b");
    assert.equal(existsSync(join(out, "a.txt")), false);
    assert.equal(await objectExists(s3, bucket, "moved/sub/b.txt"), false);
    assert.ok(await objectExists(s3, bucket, "moved/a.txt"));
  });

  it("deletes nothing when the copy fails", async () => {
    const file = join(dir, "keep.bin");
    await writeFile(file, "keep");
    const up = await s3x(["mv", file, "s3://no-such-bucket-s3x-mv/keep.bin"]);
    assert.equal(up.code, 1);
    assert.match(up.stderr, /NoSuchBucket/);
    assert.ok(existsSync(file));
    await putTestObject(s3, bucket, "stay/x.bin", Buffer.from("x"));
    const s2s = await s3x(["mv", `s3://${bucket}/stay/x.bin`, "s3://no-such-bucket-s3x-mv/x.bin"]);
    assert.equal(s2s.code, 1);
    assert.ok(await objectExists(s3, bucket, "stay/x.bin"));
    const many = await s3x(["mv", `s3://${bucket}/stay/`, "s3://no-such-bucket-s3x-mv/", "--recursive"]);
    assert.equal(many.code, 1);
    assert.ok(await objectExists(s3, bucket, "stay/x.bin"));
  });

  it("refuses to move an object onto itself, a prefix into itself, and stdin/stdout", async () => {
    const self = await s3x(["mv", `s3://${bucket}/stay/x.bin`, `s3://${bucket}/stay/`]);
    assert.equal(self.code, 2);
    assert.match(self.stderr, /onto itself/);
    const nested = await s3x(["mv", `s3://${bucket}/stay/`, `s3://${bucket}/stay/inner/`, "--recursive"]);
    assert.equal(nested.code, 2);
    assert.match(nested.stderr, /one prefix holds the other/);
    const stream = await s3x(["mv", "-", `s3://${bucket}/stream`]);
    assert.equal(stream.code, 2);
    assert.ok(await objectExists(s3, bucket, "stay/x.bin"));
  });
});
