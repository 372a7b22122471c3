import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { runS3x } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startRewriteProxy, type RewriteProxy } from "../support/rewrite-proxy.js";

/**
 * Listings that are well-formed XML but spelled unusually, or that
 * contradict themselves, through the real CLI and the real radosgw, with a
 * fake in between (test/support/rewrite-proxy.ts) that rewrites listing
 * answers only. s3x must see every key of the first kind, and must refuse
 * to act on the second: above all, sync --delete must never delete a local
 * file because a listing was read as emptier than it is.
 */
describe("listings that must not read as empty (integration, real radosgw + rewriting proxy)", function () {
  let s3: TestS3;
  let proxy: RewriteProxy;
  let bucket: string;
  let dir: string;
  /** key (under data/) → contents. */
  const objects = new Map<string, Buffer>();
  // 23 keys, 10 per page: three pages, and ranges listed at once.
  const PAGE = ["--page-size", "10"];

  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", proxy.endpoint, "--no-progress"], { env: s3.env });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    proxy = await startRewriteProxy(s3.host, s3.port);
    bucket = await freshBucket(s3, "listing");
    for (let i = 0; i < 20; i++) objects.set(`f${String(i).padStart(2, "0")}.bin`, randomBytes(100 + i));
    objects.set("sub/a & b.txt", Buffer.from("amp"));
    objects.set("sub/deeper/x.txt", Buffer.from("x"));
    objects.set("z<y>.txt", Buffer.from("lt gt"));
    for (const [key, body] of objects) await putTestObject(s3, bucket, `data/${key}`, body);
    dir = await mkdtemp(join(tmpdir(), "s3x-listing-"));
  });

  afterEach(() => proxy.setRewrite((xml) => xml));

  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Every file under `root`, relative path → contents. */
  async function filesUnder(root: string): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      out.set(relative(root, path), await readFile(path));
    }
    return out;
  }

  /** A directory holding what `sync` should leave there: every object, plus one local file not in S3. */
  async function syncedDirectory(name: string): Promise<string> {
    const target = join(dir, name);
    for (const [key, body] of objects) {
      await mkdir(join(target, key, ".."), { recursive: true });
      await writeFile(join(target, key), body);
    }
    await writeFile(join(target, "local-only.txt"), "not in S3");
    return target;
  }

  const variants: { name: string; rewrite: (xml: string) => string }[] = [
    { name: '<Contents xmlns="">', rewrite: (xml) => xml.replaceAll("<Contents>", '<Contents xmlns="">') },
    { name: "<Contents >", rewrite: (xml) => xml.replaceAll("<Contents>", "<Contents >") },
  ];

  for (const variant of variants) {
    describe(`listing answers with ${variant.name}`, () => {
      it("ls --recursive lists every key", async () => {
        proxy.setRewrite(variant.rewrite);
        const before = proxy.rewritten;
        const res = await s3x(["ls", "--recursive", "--json", ...PAGE, `s3://${bucket}/data/`]);
        assert.equal(res.code, 0, res.stderr);
        const keys = res.stdout.toString().split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { key: string }).key);
        assert.deepEqual(keys.sort(), [...objects.keys()].map((k) => `data/${k}`).sort());
        assert.ok(proxy.rewritten > before, "the proxy rewrote listing answers");
      });

      it("ls without --recursive lists every key and sub-prefix of the folder", async () => {
        proxy.setRewrite(variant.rewrite);
        const res = await s3x(["ls", "--json", ...PAGE, `s3://${bucket}/data/`]);
        assert.equal(res.code, 0, res.stderr);
        const lines = res.stdout.toString().trim().split("\n").map((line) => JSON.parse(line) as { key?: string; prefix?: string });
        assert.deepEqual(lines.filter((l) => l.prefix).map((l) => l.prefix), [`s3://${bucket}/data/sub/`]);
        assert.deepEqual(lines.filter((l) => l.key).map((l) => l.key).sort(), [...objects.keys()].filter((k) => !k.startsWith("sub/")).map((k) => `data/${k}`).sort());
      });

      it("cp --recursive downloads every object", async () => {
        proxy.setRewrite(variant.rewrite);
        const target = join(dir, `cp-${variant.name.length}`);
        const res = await s3x(["cp", "--recursive", ...PAGE, `s3://${bucket}/data/`, target]);
        assert.equal(res.code, 0, res.stderr);
        assert.deepEqual(await filesUnder(target), objects);
      });

      it("sync --delete keeps every local file that is in S3 and deletes only the one that is not", async () => {
        proxy.setRewrite(variant.rewrite);
        const target = await syncedDirectory(`sync-${variant.name.length}`);
        const res = await s3x(["sync", "--delete", ...PAGE, `s3://${bucket}/data/`, target]);
        assert.equal(res.code, 0, res.stderr);
        assert.deepEqual(await filesUnder(target), objects);
        assert.match(res.stdout.toString(), /delete: .*local-only\.txt/);
      });
    });
  }

  describe("listing answers that contradict themselves", () => {
    async function refusesToDelete(rewrite: (xml: string) => string, why: RegExp): Promise<void> {
      proxy.setRewrite(rewrite);
      const target = await syncedDirectory(`contradiction-${randomBytes(3).toString("hex")}`);
      const expected = await filesUnder(target);
      const res = await s3x(["sync", "--delete", ...PAGE, `s3://${bucket}/data/`, target]);
      assert.notEqual(res.code, 0, "sync must fail");
      assert.match(res.stderr, why);
      assert.equal(res.stderr.trim().split("\n").length, 1, `one line: ${res.stderr}`);
      assert.doesNotMatch(res.stdout.toString(), /delete:/);
      assert.deepEqual(await filesUnder(target), expected, "no local file was deleted");
    }

    it("sync --delete fails clearly and deletes nothing when a page's KeyCount does not match its keys", async () => {
      await refusesToDelete((xml) => xml.replace(/<KeyCount>(\d+)<\/KeyCount>/, (_, n: string) => `<KeyCount>${Number(n) + 1}</KeyCount>`), /KeyCount is \d+ but the page holds \d+ keys and prefixes/);
    });

    it("sync --delete fails clearly and deletes nothing when a page's keys went missing but KeyCount still counts them", async () => {
      // A key dropped from each page (as a broken reader would): the count no longer adds up.
      await refusesToDelete((xml) => xml.replace(/<Contents>.*?<\/Contents>/s, ""), /KeyCount is \d+ but the page holds \d+ keys and prefixes/);
    });

    it("sync --delete fails clearly and deletes nothing when a truncated page has no continuation token", async () => {
      await refusesToDelete((xml) => xml.replace(/<NextContinuationToken>.*?<\/NextContinuationToken>/s, ""), /IsTruncated is true but there is no NextContinuationToken/);
    });

    it("sync --delete fails clearly and deletes nothing when a page lists its keys out of order", async () => {
      // The first two entries of each page swapped.
      const swap = (xml: string): string => xml.replace(/(<Contents>.*?<\/Contents>)(<Contents>.*?<\/Contents>)/s, "$2$1");
      await refusesToDelete(swap, /out of S3's key order; the listing cannot be trusted to be whole/);
    });

    it("ls fails clearly when a listing answer is not a ListBucketResult", async () => {
      proxy.setRewrite(() => `<?xml version="1.0" encoding="UTF-8"?><Something><Else/></Something>`);
      const res = await s3x(["ls", "--recursive", `s3://${bucket}/data/`]);
      assert.notEqual(res.code, 0);
      assert.match(res.stderr, /the answer is not a ListBucketResult; nothing was done with it/);
      assert.equal(res.stderr.trim().split("\n").length, 1, `one line: ${res.stderr}`);
      assert.equal(res.stdout.toString(), "");
    });
  });
});
