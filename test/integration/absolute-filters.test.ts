import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

/**
 * --include / --exclude with an absolute path, as aws-cli reads them: a
 * relative pattern is rooted at the source (and at the destination) directory,
 * an absolute one is matched against the file's full local path as it is. An
 * absolute filter used to match nothing, so `sync --delete` deleted the very
 * file the user had excluded.
 */
describe("absolute --include/--exclude paths (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[], cwd?: string): Promise<RunResult> => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env, cwd });
  const keysUnder = async (prefix: string): Promise<string[]> =>
    ((await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key ?? "").sort();

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "absfilter");
    await putTestObject(s3, bucket, "p/a.txt", Buffer.from("a\n"));
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-absfilter-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("sync --delete keeps a local file excluded by its absolute path, and deletes the others", async () => {
    const target = join(dir, "r1");
    await mkdir(target);
    await writeFile(join(target, "keep.txt"), "keep\n");
    await writeFile(join(target, "gone.txt"), "gone\n");
    const res = await s3x(["sync", `s3://${bucket}/p/`, target, "--delete", "--exclude", join(target, "keep.txt")]);
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stdout.toString(), /keep\.txt/);
    assert.match(res.stdout.toString(), /^delete: .*gone\.txt$/m);
    assert.deepEqual((await readdir(target)).sort(), ["a.txt", "keep.txt"]);
  });

  it("cp -r upload skips the subtree an absolute --exclude names (the source given relative to the working directory)", async () => {
    await mkdir(join(dir, "src", "sub"), { recursive: true });
    await writeFile(join(dir, "src", "top.txt"), "top\n");
    await writeFile(join(dir, "src", "sub", "x.txt"), "x\n");
    await writeFile(join(dir, "src", "sub", "y.txt"), "y\n");
    const res = await s3x(["cp", "-r", "src", `s3://${bucket}/x/`, "--exclude", `${dir}/src/sub/*`], dir);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await keysUnder("x/"), ["x/top.txt"]);
  });
});
