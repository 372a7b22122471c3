/** --shard and its companions, refused alike by every command where they mean nothing (issue #38: one place checks them). */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runS3x } from "../support/cli.js";
import { freshBucket, objectExists, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

describe("--shard-count and --shard-balance without --shard: a usage error for every command (real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "selrules");
    await putTestObject(s3, bucket, "keep/a.txt", Buffer.from("a\n"));
    dir = await mkdtemp(join(tmpdir(), "s3x-selrules-"));
    await writeFile(join(dir, "up.txt"), "up\n");
  });

  after(() => rm(dir, { recursive: true, force: true }));

  it("cp of one file --shard-balance count: exit 2, nothing uploaded", async () => {
    const res = await s3x(["cp", join(dir, "up.txt"), `s3://${bucket}/up.txt`, "--shard-balance", "count"]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /^s3x: .*--shard-balance goes with --shard\n$/);
    assert.equal(await objectExists(s3, bucket, "up.txt"), false);
  });

  it("rm of one key --shard-count 2: exit 2, nothing deleted", async () => {
    const res = await s3x(["rm", `s3://${bucket}/keep/a.txt`, "--shard-count", "2"]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /^s3x: .*--shard-count goes with --shard auto\n$/);
    assert.equal(await objectExists(s3, bucket, "keep/a.txt"), true);
  });

  it("rm -r --shard-balance count without --shard: exit 2, nothing deleted", async () => {
    const res = await s3x(["rm", "-r", `s3://${bucket}/keep/`, "--shard-balance", "count"]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /^s3x: .*rm does not take --shard-balance/);
    assert.equal(await objectExists(s3, bucket, "keep/a.txt"), true);
  });

  it("cp -r --shard-count 2 without --shard: exit 2 (as before), nothing copied", async () => {
    const res = await s3x(["cp", "-r", `s3://${bucket}/keep/`, `s3://${bucket}/copied/`, "--shard-count", "2"]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /--shard-count goes with --shard auto/);
    assert.equal(await objectExists(s3, bucket, "copied/a.txt"), false);
  });
});
