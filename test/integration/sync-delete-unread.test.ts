import assert from "node:assert/strict";
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runS3x } from "../support/cli.js";
import { freshBucket, objectExists, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

/**
 * sync --delete from a directory that could not be read whole: whatever the
 * destination holds under the unread part stays, since nobody knows whether
 * the source still has it. A symlink loop is the unread part here (an
 * unreadable directory is the same problem, but root, who runs the tests,
 * reads every directory).
 */
describe("s3x sync --delete leaves what lies under an unread part of the source (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "unread");
    dir = await mkdtemp(join(tmpdir(), "s3x-unread-"));
  });

  it("a symlink loop is reported, the objects under its path stay, and what is really gone is deleted", async () => {
    const src = join(dir, "src");
    await mkdir(join(src, "data"), { recursive: true });
    await writeFile(join(src, "data", "kept.txt"), "kept");
    // data/loop → data: the walk meets a directory it is already in, and skips it.
    await symlink(join(src, "data"), join(src, "data", "loop"));
    for (const key of ["data/kept.txt", "data/loop/under-loop.txt", "data/gone.txt"]) await putTestObject(s3, bucket, `p/${key}`, Buffer.from(key));
    const res = await runS3x(["sync", src, `s3://${bucket}/p/`, "--delete", "--no-progress"], { env: s3.env, cwd: dir });
    assert.match(res.stderr, /symlink loop/, "the unread part is reported");
    assert.ok(await objectExists(s3, bucket, "p/data/loop/under-loop.txt"), "what lies under the unread part stays");
    assert.equal(await objectExists(s3, bucket, "p/data/gone.txt"), false, "what the source really lacks is deleted");
    assert.ok(await objectExists(s3, bucket, "p/data/kept.txt"));
  });
});
