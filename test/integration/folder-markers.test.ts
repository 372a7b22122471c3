import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

/**
 * Folder markers (the empty "prefix/" objects the AWS console's Create
 * folder makes) and `ls` exit statuses, as aws-cli 2 behaves against
 * radosgw: cp -r and sync skip the markers, a key ending in "/" that holds
 * bytes fails alone, `ls s3://` lists buckets, and `ls` of a prefix with
 * nothing under it exits 1.
 */
describe("folder markers and ls (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[]): Promise<RunResult> => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });
  /** Everything under a directory, files and directories, relative and sorted. */
  const entriesUnder = async (root: string): Promise<string[]> => (await readdir(root, { recursive: true })).sort();
  const keysUnder = async (prefix: string): Promise<string[]> =>
    ((await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key ?? "").sort();

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "markers");
    // As the console makes them: "data/" at the root of what is downloaded, "data/sub/" and an empty "data/empty/" inside.
    for (const marker of ["data/", "data/sub/", "data/empty/"]) await putTestObject(s3, bucket, marker, Buffer.alloc(0));
    await putTestObject(s3, bucket, "data/x.txt", Buffer.from("x\n"));
    await putTestObject(s3, bucket, "data/sub/f.txt", Buffer.from("f\n"));
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-markers-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const source of ["data/", "data"]) {
    it(`cp -r s3://bucket/${source} skips the folder markers, the root one included`, async () => {
      const res = await s3x(["cp", "-r", `s3://${bucket}/${source}`, dir]);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /^cp: 2 transferred \(4 B\), 0 deleted, 0 skipped, 0 failed in /);
      assert.deepEqual(await entriesUnder(dir), ["sub", "sub/f.txt", "x.txt"]);
      assert.equal(await readFile(join(dir, "sub", "f.txt"), "utf8"), "f\n");
    });
  }

  it("cp -r of the whole bucket skips the markers at every level", async () => {
    const res = await s3x(["cp", "-r", `s3://${bucket}`, dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await entriesUnder(dir), ["data", "data/sub", "data/sub/f.txt", "data/x.txt"]);
  });

  it("sync from S3 skips the markers, and a second sync has nothing to do", async () => {
    const first = await s3x(["sync", `s3://${bucket}/data/`, dir]);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(await entriesUnder(dir), ["sub", "sub/f.txt", "x.txt"]);
    const second = await s3x(["sync", `s3://${bucket}/data/`, dir]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout.toString(), "");
  });

  it("sync between prefixes does not copy the markers, so a second sync copies nothing", async () => {
    const dest = `s3://${bucket}/copied-${Date.now()}/`;
    const first = await s3x(["sync", `s3://${bucket}/data/`, dest]);
    assert.equal(first.code, 0, first.stderr);
    const destPrefix = dest.slice(`s3://${bucket}/`.length);
    assert.deepEqual(await keysUnder(destPrefix), [`${destPrefix}sub/f.txt`, `${destPrefix}x.txt`]);
    const second = await s3x(["sync", `s3://${bucket}/data/`, dest]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout.toString(), "", "nothing copied again");
  });

  it("fails a key ending in / that holds bytes (no file can have its name), and downloads the rest", async () => {
    const other = await freshBucket(s3, "markers");
    await putTestObject(s3, other, "set/odd/", Buffer.from("bytes under a folder's name"));
    await putTestObject(s3, other, "set/fine.txt", Buffer.from("fine\n"));
    const res = await s3x(["cp", "-r", `s3://${other}/set/`, dir]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /refused key "set\/odd\/": it ends in "\/", as a folder does, but holds 27 bytes/);
    assert.deepEqual(await entriesUnder(dir), ["fine.txt"]);
  });

  it("ls s3:// lists the buckets, as ls with no argument", async () => {
    const plain = await s3x(["ls"]);
    const url = await s3x(["ls", "s3://"]);
    assert.equal(url.code, 0, url.stderr);
    assert.equal(url.stdout.toString(), plain.stdout.toString());
    assert.match(url.stdout.toString(), new RegExp(` ${bucket}\\n`));
  });

  it("ls of a prefix with nothing under it exits 1 and prints nothing", async () => {
    for (const args of [["ls", `s3://${bucket}/missing`], ["ls", `s3://${bucket}/missing/`], ["ls", "--recursive", `s3://${bucket}/missing`]]) {
      const res = await s3x(args);
      assert.equal(res.code, 1, `${args.join(" ")}: ${res.stderr}`);
      assert.equal(res.stdout.toString(), "");
      assert.equal(res.stderr, "");
    }
    const found = await s3x(["ls", `s3://${bucket}/dat`]);
    assert.equal(found.code, 0, found.stderr);
    assert.match(found.stdout.toString(), /PRE data\/\n/);
  });

  it("ls of an empty bucket exits 0", async () => {
    const empty = await freshBucket(s3, "markers");
    for (const url of [`s3://${empty}`, `s3://${empty}/`]) {
      const res = await s3x(["ls", url]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.toString(), "");
    }
    assert.equal((await s3x(["ls", `s3://${empty}/nothing`])).code, 1);
  });
});
