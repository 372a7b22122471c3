import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertExitedPromptly, runS3x, type RunResult } from "../support/cli.js";
import { AbortMultipartUploadCommand, CreateMultipartUploadCommand, ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { freshBucket, objectExists, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startRewriteProxy, type ListingRewrite, type RewriteProxy } from "../support/rewrite-proxy.js";

/**
 * A listing of `s3://bucket/data/` that names a key outside `data/` (a
 * broken or hostile server, a proxy in between: here the fake
 * test/support/rewrite-proxy.ts adds the key to radosgw's real answers).
 * aws-cli acts on such a key: `rm -r` deletes it, `cp -r`/`sync` cut the
 * prefix's length off it and write the file under a wrong name. s3x must
 * refuse the page: exit 1, one line naming the key and the prefix, and
 * nothing done with the page's keys. With --list-ranges (the default),
 * pages listed after a StartAfter are checked alike.
 */
describe("listing pages that name keys outside the prefix (integration, real radosgw + rewriting proxy)", function () {
  let s3: TestS3;
  let proxy: RewriteProxy;
  let bucket: string;
  let dir: string;
  /** Keys under data/: 23, so that --page-size 10 lists in three pages and key ranges. */
  const inside = Array.from({ length: 23 }, (_, i) => `data/f${String(i).padStart(2, "0")}.bin`);
  /** Real objects outside data/: one elsewhere, one that shares the prefix's text but not its "/". */
  const OUTSIDE = "zzz/keepme";
  const SIBLING = "datazz-outside";

  // A guard, not a measure: a run that fails must still end on its own (a socket left open kept it for 90 s).
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", proxy.endpoint, "--no-progress"], { env: s3.env, timeoutMs: 40_000 });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    proxy = await startRewriteProxy(s3.host, s3.port);
    dir = await mkdtemp(join(tmpdir(), "s3x-outside-"));
  });

  beforeEach(async function () {
    this.timeout(60_000);
    bucket = await freshBucket(s3, "outside");
    for (const key of [...inside, OUTSIDE, SIBLING]) await putTestObject(s3, bucket, key, Buffer.from(key));
  });

  afterEach(() => proxy.setRewrite((xml) => xml));

  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** One more `<Contents>` entry for `key` (as long as the real object), KeyCount kept true. */
  function withKey(xml: string, key: string): string {
    const entry = `<Contents><Key>${key}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>&quot;0&quot;</ETag><Size>${key.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
    return xml.replace(/<KeyCount>(\d+)<\/KeyCount>/, (_, n: string) => `<KeyCount>${Number(n) + 1}</KeyCount>`).replace("</ListBucketResult>", `${entry}</ListBucketResult>`);
  }

  /** The keys a listing answer holds. */
  function keysOf(xml: string): string[] {
    return [...xml.matchAll(/<Key>(.*?)<\/Key>/g)].map((m) => m[1]!);
  }

  /** Adds `key` to every listing answer's last page (one that is not truncated). */
  const onLastPage = (key: string): ListingRewrite => (xml) => (xml.includes("<IsTruncated>false</IsTruncated>") ? withKey(xml, key) : xml);

  async function assertAllObjectsThere(): Promise<void> {
    for (const key of [...inside, OUTSIDE, SIBLING]) assert.ok(await objectExists(s3, bucket, key), `${key} is still there`);
  }

  async function filesUnder(root: string): Promise<string[]> {
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(root.length + 1)).sort();
  }

  function assertRefused(res: RunResult, key: string): void {
    assert.equal(res.signal, null, `ended on its own, not killed by the guard: ${res.stderr}`);
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.match(res.stderr, new RegExp(`"${key}".*outside the prefix "data/"`));
    assert.equal(res.stderr.trim().split("\n").length, 1, `one line: ${res.stderr}`);
  }

  it("rm -r refuses a one-page listing naming a key outside the prefix, and deletes nothing", async () => {
    proxy.setRewrite(onLastPage(OUTSIDE));
    const res = await s3x(["rm", "--recursive", `s3://${bucket}/data/`]);
    assertRefused(res, OUTSIDE);
    assert.doesNotMatch(res.stdout.toString(), /delete:/);
    await assertAllObjectsThere();
  });

  it("cp -r (download) refuses it and writes no file, not even one under a name cut from the outside key", async () => {
    proxy.setRewrite(onLastPage(SIBLING));
    const target = join(dir, `cp-${bucket}`);
    const res = await s3x(["cp", "--recursive", `s3://${bucket}/data/`, target]);
    assertRefused(res, SIBLING);
    assert.deepEqual(await filesUnder(target), []);
  });

  it("sync (download) refuses it and writes no file", async () => {
    proxy.setRewrite(onLastPage(SIBLING));
    const target = join(dir, `sync-${bucket}`);
    await mkdir(target, { recursive: true });
    await writeFile(join(target, "local-only.txt"), "not in S3");
    const res = await s3x(["sync", "--delete", `s3://${bucket}/data/`, target]);
    assertRefused(res, SIBLING);
    assert.deepEqual(await filesUnder(target), ["local-only.txt"]);
  });

  /** Adds `key` to the last page of each key range listed with StartAfter, and returns the keys those pages held. */
  function twistRanges(key: string): string[] {
    const poisoned: string[] = [];
    proxy.setRewrite((xml, query) => {
      if (!query.has("start-after") || !xml.includes("<IsTruncated>false</IsTruncated>")) return xml;
      poisoned.push(...keysOf(xml));
      return withKey(xml, key);
    });
    return poisoned;
  }

  it("rm -r listing in key ranges (StartAfter) refuses a range's page naming a key outside the prefix: that key and the page's own keys stay", async () => {
    // Only answers to a StartAfter request, i.e. a key range listed at once with others.
    const poisoned = twistRanges(OUTSIDE);
    const res = await s3x(["rm", "--recursive", "--page-size", "10", `s3://${bucket}/data/`]);
    assert.ok(poisoned.length > 0, "a key range's last page was listed (and twisted)");
    assertRefused(res, OUTSIDE);
    assert.ok(await objectExists(s3, bucket, OUTSIDE), `${OUTSIDE} is still there`);
    for (const key of poisoned) assert.ok(await objectExists(s3, bucket, key), `${key}, on the refused page, is still there`);
  });

  it("cp -r (download) listing in key ranges refuses a range's page naming a key outside the prefix: no file from it", async () => {
    const poisoned = twistRanges(SIBLING);
    const target = join(dir, `cp-ranges-${bucket}`);
    const res = await s3x(["cp", "--recursive", "--page-size", "10", `s3://${bucket}/data/`, target]);
    assert.ok(poisoned.length > 0, "a key range's last page was listed (and twisted)");
    assertRefused(res, SIBLING);
    const written = await filesUnder(target);
    assert.ok(!written.includes("z-outside"), `no file named from the outside key: ${written.join(", ")}`);
    for (const key of poisoned) assert.ok(!written.includes(key.slice("data/".length)), `${key}, on the refused page, was not downloaded`);
  });

  it("sync (download) listing in key ranges refuses a range's page naming a key outside the prefix, and deletes nothing", async () => {
    twistRanges(SIBLING);
    const target = join(dir, `sync-ranges-${bucket}`);
    await mkdir(target, { recursive: true });
    await writeFile(join(target, "local-only.txt"), "not in S3");
    const res = await s3x(["sync", "--delete", "--page-size", "10", `s3://${bucket}/data/`, target]);
    assertRefused(res, SIBLING);
    const written = await filesUnder(target);
    assert.ok(written.includes("local-only.txt"), "the local file was not deleted");
    assert.ok(!written.includes("z-outside"), `no file named from the outside key: ${written.join(", ")}`);
  });

  it("rm --uploads refuses an uploads listing naming an upload outside the prefix, and aborts none", async () => {
    const create = async (key: string) => (await s3.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId!;
    const outsideId = await create(OUTSIDE);
    await create("data/f00.bin");
    proxy.setRewrite((xml, query) => {
      if (!query.has("uploads")) return xml;
      // The outside upload (its real key and ID) added to the answer for data/.
      return xml.replace("</ListMultipartUploadsResult>", `<Upload><Key>${OUTSIDE}</Key><UploadId>${outsideId}</UploadId><Initiated>2026-01-01T00:00:00.000Z</Initiated><StorageClass>STANDARD</StorageClass></Upload></ListMultipartUploadsResult>`);
    });
    const res = await s3x(["rm", "--uploads", `s3://${bucket}/data/`]);
    assert.equal(res.signal, null, res.stderr);
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.match(res.stderr, new RegExp(`an upload of "${OUTSIDE}", outside the prefix "data/"`));
    assert.equal(res.stderr.trim().split("\n").length, 1, `one line: ${res.stderr}`);
    const open = (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
    assert.deepEqual(open.map((u) => u.Key).sort(), ["data/f00.bin", OUTSIDE], "no upload was aborted");
    for (const u of open) await s3.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }));
  });

  it("ls without --recursive refuses a common prefix outside the prefix", async () => {
    proxy.setRewrite((xml) => xml.replace("</ListBucketResult>", "<CommonPrefixes><Prefix>zzz/</Prefix></CommonPrefixes></ListBucketResult>").replace(/<KeyCount>(\d+)<\/KeyCount>/, (_, n: string) => `<KeyCount>${Number(n) + 1}</KeyCount>`));
    const res = await s3x(["ls", `s3://${bucket}/data/`]);
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.match(res.stderr, /"zzz\/".*outside the prefix "data\/"/);
    assert.equal(res.stdout.toString(), "");
  });
});
