import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { createHash } from "node:crypto";

/**
 * What a user types and sees, as with aws-cli (issue #22): options anywhere,
 * --dryrun that touches nothing, aws-cli's per-object lines on stdout,
 * failures on stderr, JSON Lines, usage errors that name the word at fault.
 * Every run goes through the real binary against the real radosgw, from a
 * working directory of the test's own, so paths print as aws-cli prints them.
 */
describe("s3x command line and output, as aws-cli (integration, real radosgw)", function () {
  this.timeout(120_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "surface");
    dir = await mkdtemp(join(tmpdir(), "s3x-surface-"));
    await writeFile(join(dir, "a.txt"), "hello\n");
    await mkdir(join(dir, "tree", "sub"), { recursive: true });
    await writeFile(join(dir, "tree", "keep.txt"), "keep\n");
    await writeFile(join(dir, "tree", "skip.bin"), "skip\n");
    await writeFile(join(dir, "tree", "sub", "also.tmp"), "tmp\n");
    await writeFile(join(dir, "tree", "sub", "deep.txt"), "deep\n");
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `s3x ARGS` from the test directory; the endpoint comes from the environment (AWS_ENDPOINT_URL). */
  const s3x = (args: string[], stdin?: Buffer): Promise<RunResult> => runS3x(args, { env: s3.env, cwd: dir, stdin });
  const out = (res: RunResult): string[] => res.stdout.toString().split("\n").filter((l) => l !== "");
  const sha = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex");

  describe("options before, between and after the paths", () => {
    it("an array option before the paths takes one value, not the paths (cp -r --exclude '*.bin' DIR URL)", async () => {
      const res = await s3x(["cp", "-r", "--exclude", "*.bin", "tree", `s3://${bucket}/before/`]);
      assert.equal(res.code, 0, res.stderr);
      assert.deepEqual(out(res).sort(), [
        `upload: tree/keep.txt to s3://${bucket}/before/keep.txt`,
        `upload: tree/sub/also.tmp to s3://${bucket}/before/sub/also.tmp`,
        `upload: tree/sub/deep.txt to s3://${bucket}/before/sub/deep.txt`,
      ]);
      assert.equal(await objectExists(s3, bucket, "before/skip.bin"), false);
    });

    it("repeated options, --opt=value, and options between the paths", async () => {
      const res = await s3x(["cp", "tree", "--exclude=*.bin", "-r", `s3://${bucket}/between/`, "--exclude", "*.tmp", "--dryrun"]);
      assert.equal(res.code, 0, res.stderr);
      assert.deepEqual(out(res).sort(), [
        `(dryrun) upload: tree/keep.txt to s3://${bucket}/between/keep.txt`,
        `(dryrun) upload: tree/sub/deep.txt to s3://${bucket}/between/sub/deep.txt`,
      ]);
    });

    it("a global option before the command (s3x --resolve HOST=IP cp …, s3x --endpoint-url URL cp …)", async () => {
      const resolved = await s3x(["--resolve", `${s3.host}=${s3.host}`, "cp", "a.txt", `s3://${bucket}/global.txt`]);
      assert.equal(resolved.code, 0, resolved.stderr);
      assert.deepEqual(out(resolved), [`upload: ./a.txt to s3://${bucket}/global.txt`]);
      const endpoint = await s3x([`--endpoint-url=${s3.endpoint}`, "--dns-server", "127.0.0.1:53", "--dns-server", "127.0.0.1:5353", "ls", `s3://${bucket}/global.txt`]);
      assert.equal(endpoint.code, 0, endpoint.stderr);
      assert.match(out(endpoint)[0], / global\.txt$/);
    });

    it("an unknown option is named once (no camelCase twin), with the option meant when it is a typo", async () => {
      const unknown = await s3x(["cp", "a.txt", `s3://${bucket}/x`, "--frobnicate", "/other"]);
      assert.equal(unknown.code, 2);
      assert.equal(unknown.stderr, "s3x: unknown option --frobnicate (see s3x --help)\n");
      // yargs reads --no-X as X = false: the message names the option as typed.
      const negated = await s3x(["cp", "a.txt", `s3://${bucket}/x`, "--no-frobnicate"]);
      assert.equal(negated.code, 2);
      assert.equal(negated.stderr, "s3x: unknown option --no-frobnicate (see s3x --help)\n");
      const typo = await s3x(["cp", "-r", "tree", `s3://${bucket}/x/`, "--exlude", "*.bin"]);
      assert.equal(typo.code, 2);
      assert.equal(typo.stderr, "s3x: unknown option --exlude (did you mean --exclude?) (see s3x --help)\n");
    });

    it("an aws s3 command s3x lacks is said so, not 'corrected' to another; a typo is", async () => {
      const website = await s3x(["website", `s3://${bucket}/`, "--index-document", "index.html"]);
      assert.equal(website.code, 2);
      assert.doesNotMatch(website.stderr, /did you mean/i);
      assert.match(website.stderr, /^s3x: s3x has no website command \(it has cp, mv, sync, ls, rm, mb, rb, presign[^)]*\)/);
      const typo = await s3x(["snyc", "tree", `s3://${bucket}/x/`]);
      assert.equal(typo.stderr, 's3x: unknown command "snyc" (did you mean sync?) (see s3x --help)\n');
    });
  });

  describe("--dryrun: aws-cli's line on stdout, and nothing read, written or sent", () => {
    before(async () => {
      await putTestObject(s3, bucket, "dry/src.txt", Buffer.from("remote\n"));
    });

    it("upload: the object is not created", async () => {
      const res = await s3x(["cp", "--dryrun", "a.txt", `s3://${bucket}/dry/up.txt`]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.toString(), `(dryrun) upload: ./a.txt to s3://${bucket}/dry/up.txt\n`);
      assert.equal(res.stderr, "");
      assert.equal(await objectExists(s3, bucket, "dry/up.txt"), false);
    });

    it("upload into a prefix and from stdin: the object is not created, stdin not read", async () => {
      const prefix = await s3x(["cp", "a.txt", `s3://${bucket}/dry/into/`, "--dryrun"]);
      assert.equal(prefix.stdout.toString(), `(dryrun) upload: ./a.txt to s3://${bucket}/dry/into/a.txt\n`);
      const fromStdin = await s3x(["cp", "-", `s3://${bucket}/dry/stdin.txt`, "--dryrun"], Buffer.from("data"));
      assert.equal(fromStdin.code, 0, fromStdin.stderr);
      assert.equal(fromStdin.stdout.toString(), `(dryrun) upload: - to s3://${bucket}/dry/stdin.txt\n`);
      assert.equal(await objectExists(s3, bucket, "dry/into/a.txt"), false);
      assert.equal(await objectExists(s3, bucket, "dry/stdin.txt"), false);
    });

    it("download: an existing local file is left unchanged, a missing one not created", async () => {
      await writeFile(join(dir, "local.txt"), "local\n");
      const before = await stat(join(dir, "local.txt"));
      const res = await s3x(["cp", `s3://${bucket}/dry/src.txt`, "local.txt", "--dryrun"]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.toString(), `(dryrun) download: s3://${bucket}/dry/src.txt to ./local.txt\n`);
      assert.equal(await readFile(join(dir, "local.txt"), "utf8"), "local\n");
      assert.equal((await stat(join(dir, "local.txt"))).mtimeMs, before.mtimeMs);
      const fresh = await s3x(["cp", "--dryrun", `s3://${bucket}/dry/src.txt`, "new-dir/"]);
      assert.equal(fresh.stdout.toString(), `(dryrun) download: s3://${bucket}/dry/src.txt to new-dir/src.txt\n`);
      await assert.rejects(stat(join(dir, "new-dir")), /ENOENT/);
    });

    it("copy: the destination object is left unchanged", async () => {
      await putTestObject(s3, bucket, "dry/dest.txt", Buffer.from("old\n"));
      const res = await s3x(["cp", `s3://${bucket}/dry/src.txt`, `s3://${bucket}/dry/dest.txt`, "--dryrun"]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.toString(), `(dryrun) copy: s3://${bucket}/dry/src.txt to s3://${bucket}/dry/dest.txt\n`);
      assert.equal(await objectHash(s3, bucket, "dry/dest.txt"), sha("old\n"));
    });

    it("delete (rm, sync --delete): nothing deleted, the summary counts what would be", async () => {
      const rmRes = await s3x(["rm", `s3://${bucket}/dry/src.txt`, "--dryrun"]);
      assert.equal(rmRes.stdout.toString(), `(dryrun) delete: s3://${bucket}/dry/src.txt\n`);
      const sync = await s3x(["sync", "tree", `s3://${bucket}/dry/`, "--delete", "--dryrun", "--exclude", "*.bin", "--exclude", "*.tmp"]);
      assert.equal(sync.code, 0, sync.stderr);
      assert.deepEqual(out(sync).sort(), [
        `(dryrun) delete: s3://${bucket}/dry/dest.txt`,
        `(dryrun) delete: s3://${bucket}/dry/src.txt`,
        `(dryrun) upload: tree/keep.txt to s3://${bucket}/dry/keep.txt`,
        `(dryrun) upload: tree/sub/deep.txt to s3://${bucket}/dry/sub/deep.txt`,
      ]);
      assert.match(sync.stderr, /^sync: 2 to transfer, 2 to delete \(dry run: nothing done\), 0 skipped, 0 failed in /);
      assert.equal(await objectExists(s3, bucket, "dry/src.txt"), true);
      assert.equal(await objectExists(s3, bucket, "dry/keep.txt"), false);
    });
  });

  describe("per-object lines on stdout, failures on stderr", () => {
    it("single cp in every direction prints aws-cli's line on stdout and nothing on stderr", async () => {
      const up = await s3x(["cp", join(dir, "a.txt"), `s3://${bucket}/lines/a.txt`]);
      assert.deepEqual([up.code, up.stdout.toString(), up.stderr], [0, `upload: ./a.txt to s3://${bucket}/lines/a.txt\n`, ""]);
      const down = await s3x(["cp", `s3://${bucket}/lines/a.txt`, "down.txt"]);
      assert.deepEqual([down.code, down.stdout.toString(), down.stderr], [0, `download: s3://${bucket}/lines/a.txt to ./down.txt\n`, ""]);
      const copy = await s3x(["cp", `s3://${bucket}/lines/a.txt`, `s3://${bucket}/lines/b.txt`]);
      assert.deepEqual([copy.code, copy.stdout.toString(), copy.stderr], [0, `copy: s3://${bucket}/lines/a.txt to s3://${bucket}/lines/b.txt\n`, ""]);
    });

    it("a download to stdout prints the object's bytes only: nothing else on stdout or stderr", async () => {
      const res = await s3x(["cp", `s3://${bucket}/lines/a.txt`, "-"]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.toString(), "hello\n");
      assert.equal(res.stderr, "");
    });

    it("a failure: one line on stderr (nothing with --quiet, the same with --only-show-errors), exit 1", async () => {
      const failed = await s3x(["cp", `s3://${bucket}/lines/missing.txt`, "f.txt"]);
      assert.equal(failed.code, 1);
      assert.equal(failed.stdout.toString(), "");
      assert.match(failed.stderr, new RegExp(`^s3x: download failed: s3://${bucket}/lines/missing\\.txt to \\./f\\.txt: .*NoSuchKey.*\\n$`));
      const quiet = await s3x(["cp", `s3://${bucket}/lines/missing.txt`, "f.txt", "--quiet"]);
      assert.deepEqual([quiet.code, quiet.stdout.toString(), quiet.stderr], [1, "", ""]);
      const errorsOnly = await s3x(["cp", `s3://${bucket}/lines/missing.txt`, "f.txt", "--only-show-errors"]);
      assert.deepEqual([errorsOnly.code, errorsOnly.stdout.toString(), errorsOnly.stderr], [1, "", failed.stderr]);
      const fine = await s3x(["cp", "a.txt", `s3://${bucket}/lines/quiet.txt`, "--only-show-errors"]);
      assert.deepEqual([fine.code, fine.stdout.toString(), fine.stderr], [0, "", ""]);
      await assert.rejects(stat(join(dir, "f.txt")), /ENOENT/);
    });

    it("sync --delete: a line per deletion, and the summary counts the deletions", async () => {
      await putTestObject(s3, bucket, "mirror/stale.txt", Buffer.from("stale"));
      const res = await s3x(["sync", "tree", `s3://${bucket}/mirror/`, "--delete"]);
      assert.equal(res.code, 0, res.stderr);
      assert.ok(out(res).includes(`delete: s3://${bucket}/mirror/stale.txt`), res.stdout.toString());
      assert.match(res.stderr, /^sync: 4 transferred \(\d+ B\), 1 deleted, 0 skipped, 0 failed in /);
      assert.equal(await objectExists(s3, bucket, "mirror/stale.txt"), false);
    });
  });

  describe("--json: JSON Lines, one per object, then a summary", () => {
    it("a single cp: the object's line, then the summary", async () => {
      const res = await s3x(["cp", "a.txt", `s3://${bucket}/json/a.txt`, "--json"]);
      assert.equal(res.code, 0, res.stderr);
      const [object, summary, ...rest] = out(res).map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(rest, []);
      assert.deepEqual(object, { action: "upload", source: "a.txt", destination: `s3://${bucket}/json/a.txt`, size: 6, status: "ok" });
      assert.equal(summary.command, "cp");
      assert.equal(summary.status, "ok");
      assert.deepEqual([summary.transferred, summary.failed, summary.bytes], [1, 0, 6]);
    });

    it("a failed single cp prints its JSON lines too (stderr when stdout carries the data)", async () => {
      const res = await s3x(["cp", `s3://${bucket}/json/missing`, "-", "--json"]);
      assert.equal(res.code, 1);
      assert.equal(res.stdout.toString(), "");
      const [object, summary] = res.stderr.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual([object.action, object.source, object.destination, object.status], ["download", `s3://${bucket}/json/missing`, "-", "failed"]);
      assert.match(String(object.error), /NoSuchKey/);
      assert.deepEqual([summary.command, summary.status, summary.failed], ["cp", "failed", 1]);
    });
  });

  describe("stdin/stdout misuse and help", () => {
    it("sync - s3://… is a usage error naming the problem (exit 2), not a leaked Node error", async () => {
      for (const args of [["sync", "-", `s3://${bucket}/x/`], ["sync", `s3://${bucket}/x/`, "-"], ["cp", "-r", "-", `s3://${bucket}/x/`]]) {
        const res = await s3x(args);
        assert.equal(res.code, 2, res.stderr);
        assert.match(res.stderr, /(cannot read many objects from - \(stdin\)|cannot write many objects to - \(stdout\); use cp --recursive or cat)\n$/);
        assert.doesNotMatch(res.stderr, /ERR_INVALID_ARG_VALUE|\\x00/);
      }
    });

    it("help: usage first, examples, the command's own options before the shared groups, -q once", async () => {
      const top = await s3x(["--help"]);
      assert.equal(top.code, 0);
      const text = top.stdout.toString();
      assert.match(text, /^s3x <command> \[options\]\n/);
      assert.match(text, /\nExamples:\n {2}s3x cp /);
      assert.match(text, /\n {2}-q, --quiet /);
      const cp = (await s3x(["cp", "--help"])).stdout.toString();
      assert.match(cp, /^s3x cp <source> \[destination\]\n/);
      assert.ok(cp.indexOf("Transfer:") < cp.indexOf("Connection:"), "cp's own options first");
      assert.match(cp, /\nExamples:\n(\s+s3x cp .*\n){2,4}/);
      assert.doesNotMatch(cp, /-q, -q/);
      const rmHelp = (await s3x(["rm", "--help"])).stdout.toString();
      assert.ok(rmHelp.indexOf("--recursive") < rmHelp.indexOf("Connection:"), "rm's own options first");
    });
  });
});
