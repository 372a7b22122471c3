import assert from "node:assert/strict";
import { appendFile, mkdir, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertExitedPromptly, runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, objectExists, openUploads, testS3, type TestS3 } from "../support/s3-server.js";
import { startDropResponseProxy, type DropResponseProxy } from "../support/drop-response-proxy.js";

const MiB = 1024 * 1024;
/** Three 8 MiB parts (the default part size). */
const SIZE = 24 * MiB;

/**
 * A file rewritten in place, or appended to, while its multipart upload
 * runs: the parts read before and after the change would make an object
 * that never existed as a file (or the file cut at its old length). The
 * fake test/support/drop-response-proxy.ts holds the second part's request,
 * so the upload is stopped at a known point with the third part not yet
 * read; the test changes the file there and lets the upload go on. s3x must
 * see the change before CompleteMultipartUpload: exit 1, a line naming the
 * file, no object, no multipart upload left open.
 */
describe("a file that changes while it is uploaded (integration, real radosgw + holding proxy)", function () {
  let s3: TestS3;
  let proxy: DropResponseProxy;
  let bucket: string;
  let dir: string;

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    proxy = await startDropResponseProxy(s3.host, s3.port);
    bucket = await freshBucket(s3, "changed");
    dir = await mkdtemp(join(tmpdir(), "s3x-changed-"));
  });

  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * Runs `args` (one request at a time, so parts are read one after
   * another); once the first part is stored and the second is held, runs
   * `change` and lets the upload go on.
   */
  async function changeMidway(args: string[], change: () => Promise<void>): Promise<RunResult> {
    proxy.holdPartsAfter(1);
    const storedBefore = proxy.succeeded.UploadPart;
    let changed = false;
    const res = await runS3x([...args, "--endpoint-url", proxy.endpoint, "--concurrency", "1", "--no-progress"], {
      env: s3.env,
      onSpawn: (child) => {
        child.stdin!.end();
        void proxy.until(() => proxy.succeeded.UploadPart > storedBefore && proxy.held > 0).then(async () => {
          await change();
          changed = true;
          proxy.release();
        });
      },
    });
    proxy.release();
    assert.ok(changed, `the file was changed half-way: ${res.stderr}`);
    return res;
  }

  async function fileOf(name: string, fill: string): Promise<string> {
    const path = join(dir, name);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(path, Buffer.alloc(SIZE, fill));
    return path;
  }

  /** Overwrites the file with B's in place: same inode, same size (dd conv=notrunc). */
  async function rewriteInPlace(path: string): Promise<void> {
    const handle = await open(path, "r+");
    try {
      await handle.write(Buffer.alloc(SIZE, "B"), 0, SIZE, 0);
    } finally {
      await handle.close();
    }
  }

  async function assertRefused(res: RunResult, path: string, key: string): Promise<void> {
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.ok(res.stderr.includes(path), `the error names ${path}: ${res.stderr}`);
    assert.match(res.stderr, /changed while being uploaded/);
    assert.equal(await objectExists(s3, bucket, key), false, "no object was stored");
    assert.equal(await openUploads(s3, bucket), 0, "no multipart upload left open");
  }

  it("cp of a file rewritten in place (same size) fails and stores nothing", async () => {
    const path = await fileOf("rewritten.bin", "A");
    const res = await changeMidway(["cp", path, `s3://${bucket}/rewritten.bin`], () => rewriteInPlace(path));
    await assertRefused(res, path, "rewritten.bin");
  });

  it("cp of a file appended to fails and stores nothing (not the file cut at its old length)", async () => {
    const path = await fileOf("appended.bin", "A");
    const res = await changeMidway(["cp", path, `s3://${bucket}/appended.bin`], () => appendFile(path, Buffer.alloc(MiB, "B")));
    await assertRefused(res, path, "appended.bin");
  });

  it("cp -r of a directory whose file is rewritten in place fails for that file and stores nothing of it", async () => {
    const path = await fileOf("tree/big.bin", "A");
    const res = await changeMidway(["cp", "--recursive", join(dir, "tree"), `s3://${bucket}/tree/`], () => rewriteInPlace(path));
    await assertRefused(res, path, "tree/big.bin");
  });

  it("sync of a directory whose file is appended to fails for that file and stores nothing of it", async () => {
    const path = await fileOf("synced/big.bin", "A");
    const res = await changeMidway(["sync", join(dir, "synced"), `s3://${bucket}/synced/`], () => appendFile(path, Buffer.alloc(MiB, "B")));
    await assertRefused(res, path, "synced/big.bin");
  });
});
