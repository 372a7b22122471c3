import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

/**
 * What a recursive upload cannot send: a named pipe (it would block the
 * walk, or stream forever) and a dangling symlink are skipped with aws-cli's
 * warning, counted in the summary, and the run exits 3 ("done, some files
 * skipped") instead of 0 (the pipe used to go unmentioned) or 1 (the link
 * used to be an upload failure). Also the message for a download that meets
 * a local directory where the file should go.
 */
describe("skipped files and path clashes (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[]): Promise<RunResult> => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });
  const keysUnder = async (prefix: string): Promise<string[]> =>
    ((await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key ?? "").sort();

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "skipped");
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-skipped-"));
    await mkdir(join(dir, "d", "sub"), { recursive: true });
    await writeFile(join(dir, "d", "a.txt"), "alpha\n");
    await writeFile(join(dir, "d", "sub", "c.txt"), "gamma\n");
    const made = spawnSync("mkfifo", [join(dir, "d", "pipe")], { encoding: "utf8" });
    assert.equal(made.status, 0, made.stderr);
    await symlink("nowhere", join(dir, "d", "sub", "broken"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("cp -r warns about a named pipe and a dangling symlink, counts them, uploads the rest and exits 3", async () => {
    const res = await s3x(["cp", "-r", join(dir, "d"), `s3://${bucket}/cp/`]);
    assert.equal(res.code, 3, res.stderr);
    assert.match(res.stderr, /^warning: Skipping file .*\/d\/pipe\. File is character special device, block special device, FIFO, or socket\.$/m);
    assert.match(res.stderr, /^warning: Skipping file .*\/d\/sub\/broken\. File does not exist\.$/m);
    assert.match(res.stderr, /^cp: 2 transferred \(12 B\), 0 deleted, 2 skipped \(2 with a warning\), 0 failed in /m);
    assert.deepEqual(await keysUnder("cp/"), ["cp/a.txt", "cp/sub/c.txt"]);
  });

  it("--json: a line per skipped file with its warning, and the count in the summary", async () => {
    const res = await s3x(["sync", join(dir, "d"), `s3://${bucket}/json/`, "--json"]);
    assert.equal(res.code, 3, res.stderr);
    const lines = res.stdout.toString().trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const skipped = lines.filter((line) => line.action !== undefined && line.status === "skipped").map((line) => [String(line.source).replace(/.*\/d\//, ""), line.warning]);
    assert.deepEqual(skipped.sort(), [
      ["pipe", "File is character special device, block special device, FIFO, or socket."],
      ["sub/broken", "File does not exist."],
    ]);
    const summary = lines.at(-1)!;
    assert.equal(summary.status, "skipped");
    assert.equal(summary.warned, 2);
    assert.equal(summary.failed, 0);
  });

  it("a file excluded by the filters is not warned about", async () => {
    const res = await s3x(["cp", "-r", join(dir, "d"), `s3://${bucket}/excluded/`, "--exclude", "pipe", "--exclude", "sub/broken"]);
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stderr, /warning/);
  });

  it("a download onto a local directory of the object's name says so, without an internal code", async () => {
    await putTestObject(s3, bucket, "clash/a.txt", Buffer.from("a\n"));
    const out = join(dir, "out");
    await mkdir(join(out, "a.txt"), { recursive: true });
    const res = await s3x(["cp", "-r", `s3://${bucket}/clash/`, out]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /a\.txt: a local directory of that name is in the way/);
    assert.doesNotMatch(res.stderr, /S3X_PATH_CLASH|clashes with a prefix/);
  });

  it("keys \"a\" and \"a/x\" in one download: the clash is named as one between a key and a prefix", async () => {
    await putTestObject(s3, bucket, "pair/a", Buffer.from("a\n"));
    await putTestObject(s3, bucket, "pair/a/x", Buffer.from("x\n"));
    const res = await s3x(["cp", "-r", `s3://${bucket}/pair/`, join(dir, "pair")]);
    assert.equal(res.code, 1);
    const failures = res.stderr.split("\n").filter((line) => line.includes("download failed"));
    assert.equal(failures.length, 1, res.stderr);
    // Whichever lands first (the directory for a/x, almost always), the other names the clash between the two keys.
    assert.match(failures[0], /a local directory of that name is in the way \(the key clashes with a prefix: this download made the directory for the keys under it\)$|a file of the same name is in the way \(the key clashes with another key\)$/);
  });
});
