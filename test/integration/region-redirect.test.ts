import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileHash, randomFile, runS3x, sha256 } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startRegionRedirectingProxy, type RegionRedirectingProxy } from "../support/region-redirecting-proxy.js";

/**
 * Buckets in other regions than the run signs for (issue #38.3). radosgw
 * accepts a signature for any region, so a FAKE proxy in front of it plays
 * S3's answer to a request signed for the wrong region
 * (test/support/region-redirecting-proxy.ts). Every run signs for us-east-1
 * (or the region given) while the buckets live in eu-fake-1 and ap-fake-2:
 * each must succeed, and learn each bucket's region once (one redirect per
 * bucket per run, however many requests follow).
 *
 * A second region of radosgw itself (a zonegroup with its own endpoint) is
 * not set up: it needs a multisite realm, period commits and a second
 * radosgw instance, too heavy for this suite; radosgw would still accept
 * any region in a signature.
 */
describe("region redirects (integration, real radosgw behind a fake proxy playing S3's other regions)", () => {
  let s3: TestS3;
  let bucketA: string;
  let bucketB: string;
  let proxy: RegionRedirectingProxy;
  let dir: string;
  const s3x = (args: string[], env: NodeJS.ProcessEnv = s3.env) => runS3x([...args, "--endpoint-url", proxy.endpoint], { env });
  const redirects = (bucket: string) => proxy.redirects.get(bucket) ?? 0;

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucketA = await freshBucket(s3, "region-a");
    bucketB = await freshBucket(s3, "region-b");
    proxy = await startRegionRedirectingProxy(s3.host, s3.port);
    proxy.placeBucket(bucketA, "eu-fake-1");
    proxy.placeBucket(bucketB, "ap-fake-2");
    dir = await mkdtemp(join(tmpdir(), "s3x-region-"));
  });
  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    proxy.style = "permanent-redirect";
    proxy.redirects.clear();
    proxy.relayed.clear();
  });

  it("ls lists a bucket of another region, learning its region once", async () => {
    for (let i = 0; i < 3; i++) await putTestObject(s3, bucketA, `ls/k${i}`, Buffer.from(`v${i}`));
    const res = await s3x(["ls", `s3://${bucketA}/ls/`, "--region", "us-east-1"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.toString().split("\n").filter((l) => /k\d$/.test(l)).length, 3, res.stdout.toString());
    assert.equal(redirects(bucketA), 1);
  });

  it("cp uploads one object and a multipart object, one redirect per run", async () => {
    const small = join(dir, "small.bin");
    const smallHash = await randomFile(small, 200_000);
    const one = await s3x(["cp", small, `s3://${bucketA}/up/small.bin`]);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(await objectHash(s3, bucketA, "up/small.bin"), smallHash);
    assert.equal(redirects(bucketA), 1);

    proxy.redirects.clear();
    const big = join(dir, "big.bin");
    const bigHash = await randomFile(big, 12 * 1024 * 1024);
    const multi = await s3x(["cp", big, `s3://${bucketA}/up/big.bin`, "--part-size", "5MiB", "--multipart-threshold", "5MiB"]);
    assert.equal(multi.code, 0, multi.stderr);
    assert.equal(await objectHash(s3, bucketA, "up/big.bin"), bigHash);
    assert.equal(redirects(bucketA), 1);
    assert.equal(await openUploads(s3, bucketA), 0);
  });

  it("cp downloads in concurrent ranges from a bucket of another region, one redirect", async () => {
    const data = randomBytes(12 * 1024 * 1024);
    await putTestObject(s3, bucketA, "down/big.bin", data);
    const target = join(dir, "down-big.bin");
    const res = await s3x(["cp", `s3://${bucketA}/down/big.bin`, target, "--part-size", "5MiB", "--multipart-threshold", "5MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await fileHash(target), sha256(data));
    assert.ok((proxy.relayed.get(bucketA) ?? 0) >= 3, "three ranges reached the server");
    assert.equal(redirects(bucketA), 1);
  });

  it("sync up and down, and rm --recursive, each learning the region once", async () => {
    const local = join(dir, "tree");
    await mkdir(join(local, "sub"), { recursive: true });
    const files = ["a.txt", "b.txt", "sub/c.txt", "sub/d.txt", "e.txt"];
    for (const f of files) await writeFile(join(local, f), `content of ${f}`);
    const up = await s3x(["sync", local, `s3://${bucketA}/tree/`]);
    assert.equal(up.code, 0, up.stderr);
    for (const f of files) assert.equal(await objectExists(s3, bucketA, `tree/${f}`), true, f);
    assert.equal(redirects(bucketA), 1);

    proxy.redirects.clear();
    const back = join(dir, "tree-back");
    const down = await s3x(["sync", `s3://${bucketA}/tree/`, back]);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual((await readdir(back, { recursive: true })).filter((f) => f.endsWith(".txt")).sort(), files.sort());
    assert.equal(redirects(bucketA), 1);

    proxy.redirects.clear();
    const removed = await s3x(["rm", `s3://${bucketA}/tree/`, "--recursive"]);
    assert.equal(removed.code, 0, removed.stderr);
    for (const f of files) assert.equal(await objectExists(s3, bucketA, `tree/${f}`), false, f);
    assert.equal(redirects(bucketA), 1);
  });

  it("cp --recursive uploads many files at once, one redirect", async () => {
    const local = join(dir, "many");
    await mkdir(local, { recursive: true });
    for (let i = 0; i < 40; i++) await writeFile(join(local, `f${i}.txt`), `file ${i}`);
    const res = await s3x(["cp", local, `s3://${bucketB}/many/`, "--recursive"]);
    assert.equal(res.code, 0, res.stderr);
    for (let i = 0; i < 40; i++) assert.equal(await objectExists(s3, bucketB, `many/f${i}.txt`), true);
    assert.equal(redirects(bucketB), 1);
  });

  it("sync between buckets of two other regions learns each region once", async () => {
    for (let i = 0; i < 4; i++) await putTestObject(s3, bucketA, `cross/k${i}`, Buffer.from(`cross ${i}`));
    const res = await s3x(["sync", `s3://${bucketA}/cross/`, `s3://${bucketB}/cross/`]);
    assert.equal(res.code, 0, res.stderr);
    for (let i = 0; i < 4; i++) assert.equal(await objectHash(s3, bucketB, `cross/k${i}`), sha256(Buffer.from(`cross ${i}`)));
    assert.equal(redirects(bucketA), 1);
    assert.equal(redirects(bucketB), 1);
  });

  it("follows a 400 AuthorizationHeaderMalformed naming the region in its body (as a regional endpoint, or Swift, answers)", async () => {
    proxy.style = "malformed-authorization";
    const source = join(dir, "malformed.bin");
    const hash = await randomFile(source, 300_000);
    const up = await s3x(["cp", source, `s3://${bucketB}/malformed.bin`]);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(await objectHash(s3, bucketB, "malformed.bin"), hash);
    assert.equal(redirects(bucketB), 1);
    proxy.redirects.clear();
    const target = join(dir, "malformed-back.bin");
    const down = await s3x(["cp", `s3://${bucketB}/malformed.bin`, target]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(await fileHash(target), hash);
    assert.equal(redirects(bucketB), 1);
  });

  it("presign signs for the bucket's region, with --region wrong or no region at all", async () => {
    const data = randomBytes(50_000);
    await putTestObject(s3, bucketA, "presign.bin", data);
    const noRegion = { ...s3.env };
    delete noRegion.AWS_REGION;
    delete noRegion.AWS_DEFAULT_REGION;
    for (const [args, env] of [
      [["--region", "us-west-2"], s3.env],
      [[], noRegion],
    ] as const) {
      const res = await s3x(["presign", `s3://${bucketA}/presign.bin`, ...args], env);
      assert.equal(res.code, 0, res.stderr);
      const url = res.stdout.toString().trim();
      assert.match(url, /eu-fake-1/);
      const answer = await fetch(url);
      assert.equal(answer.status, 200);
      assert.equal(sha256(Buffer.from(await answer.arrayBuffer())), sha256(data));
    }
  });
});
