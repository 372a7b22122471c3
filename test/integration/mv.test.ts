import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { fileHash, randomFile, runS3x, sha256, type RunResult } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

describe("s3x mv (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  /** `s3x ARGS` from the test directory, so local paths print as aws-cli prints them (`./a.bin`, `tree/a.txt`). */
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env, cwd: dir });
  const lines = (res: RunResult): string[] => res.stdout.toString().split("\n").filter((l) => l !== "");

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "mv");
    dir = await mkdtemp(join(tmpdir(), "s3x-mv-"));
  });

  it("moves a file to S3 (multipart too): the object is complete, then the file is gone", async () => {
    const file = join(dir, "up.bin");
    const hash = await randomFile(file, 7 * 1024 * 1024);
    const res = await s3x(["mv", file, `s3://${bucket}/up/up.bin`, "--multipart-threshold", "5MiB", "--part-size", "5MiB"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(lines(res), [`move: ./up.bin to s3://${bucket}/up/up.bin`]);
    assert.equal(res.stderr, "");
    assert.equal(await objectHash(s3, bucket, "up/up.bin"), hash);
    assert.equal(existsSync(file), false);
  });

  it("moves an object to a file: the file holds the bytes, then the object is gone", async () => {
    const data = randomBytes(100_000);
    await putTestObject(s3, bucket, "down/a.bin", data);
    const target = join(dir, "a.bin");
    const res = await s3x(["mv", `s3://${bucket}/down/a.bin`, target]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(lines(res), [`move: s3://${bucket}/down/a.bin to ./a.bin`]);
    assert.equal(await fileHash(target), sha256(data));
    assert.equal(await objectExists(s3, bucket, "down/a.bin"), false);
  });

  it("moves an object to another key (server-side), then deletes the source", async () => {
    const data = randomBytes(50_000);
    await putTestObject(s3, bucket, "s2s/from.bin", data);
    const res = await s3x(["mv", `s3://${bucket}/s2s/from.bin`, `s3://${bucket}/s2s-to/`]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(lines(res), [`move: s3://${bucket}/s2s/from.bin to s3://${bucket}/s2s-to/from.bin`]);
    assert.equal(await objectHash(s3, bucket, "s2s-to/from.bin"), sha256(data));
    assert.equal(await objectExists(s3, bucket, "s2s/from.bin"), false);
  });

  it("moves a directory recursively with --exclude: excluded files stay, --dryrun changes nothing", async () => {
    const src = join(dir, "tree");
    await mkdir(join(src, "sub"), { recursive: true });
    await writeFile(join(src, "a.txt"), "a");
    await writeFile(join(src, "sub", "b.txt"), "b");
    await writeFile(join(src, "skip.log"), "log");
    const dry = await s3x(["mv", src, `s3://${bucket}/tree/`, "--recursive", "--exclude", "*.log", "--dryrun"]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(lines(dry).sort(), [`(dryrun) move: tree/a.txt to s3://${bucket}/tree/a.txt`, `(dryrun) move: tree/sub/b.txt to s3://${bucket}/tree/sub/b.txt`]);
    assert.ok(existsSync(join(src, "a.txt")));
    assert.equal(await objectExists(s3, bucket, "tree/a.txt"), false);
    const res = await s3x(["mv", src, `s3://${bucket}/tree/`, "--recursive", "--exclude", "*.log"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(lines(res).sort(), [`move: tree/a.txt to s3://${bucket}/tree/a.txt`, `move: tree/sub/b.txt to s3://${bucket}/tree/sub/b.txt`]);
    assert.match(res.stderr, /^mv: 2 transferred /m);
    assert.equal(existsSync(join(src, "a.txt")), false);
    assert.equal(existsSync(join(src, "sub", "b.txt")), false);
    assert.equal(await readFile(join(src, "skip.log"), "utf8"), "log");
    assert.ok(await objectExists(s3, bucket, "tree/sub/b.txt"));
    assert.equal(await objectExists(s3, bucket, "tree/skip.log"), false);
  });

  it("moves a prefix to another prefix, and a prefix to a directory, with --include/--exclude", async () => {
    const res = await s3x(["mv", `s3://${bucket}/tree/`, `s3://${bucket}/moved/`, "--recursive"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(lines(res).sort(), [`move: s3://${bucket}/tree/a.txt to s3://${bucket}/moved/a.txt`, `move: s3://${bucket}/tree/sub/b.txt to s3://${bucket}/moved/sub/b.txt`]);
    assert.ok(await objectExists(s3, bucket, "moved/a.txt"));
    assert.ok(await objectExists(s3, bucket, "moved/sub/b.txt"));
    assert.equal(await objectExists(s3, bucket, "tree/a.txt"), false);
    const out = join(dir, "out");
    const down = await s3x(["mv", `s3://${bucket}/moved/`, out, "--recursive", "--exclude", "*", "--include", "sub/*"]);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(lines(down), [`move: s3://${bucket}/moved/sub/b.txt to out/sub/b.txt`]);
    assert.equal(await readFile(join(out, "sub", "b.txt"), "utf8"), "b");
    assert.equal(existsSync(join(out, "a.txt")), false);
    assert.equal(await objectExists(s3, bucket, "moved/sub/b.txt"), false);
    assert.ok(await objectExists(s3, bucket, "moved/a.txt"));
  });

  it("deletes nothing when the copy fails", async () => {
    const file = join(dir, "keep.bin");
    await writeFile(file, "keep");
    const up = await s3x(["mv", file, "s3://no-such-bucket-s3x-mv/keep.bin"]);
    assert.equal(up.code, 1);
    assert.match(up.stderr, /^s3x: move failed: \.\/keep\.bin to s3:\/\/no-such-bucket-s3x-mv\/keep\.bin: .*NoSuchBucket/);
    assert.equal(up.stdout.length, 0);
    assert.ok(existsSync(file));
    await putTestObject(s3, bucket, "stay/x.bin", Buffer.from("x"));
    const s2s = await s3x(["mv", `s3://${bucket}/stay/x.bin`, "s3://no-such-bucket-s3x-mv/x.bin"]);
    assert.equal(s2s.code, 1);
    assert.ok(await objectExists(s3, bucket, "stay/x.bin"));
    const many = await s3x(["mv", `s3://${bucket}/stay/`, "s3://no-such-bucket-s3x-mv/", "--recursive"]);
    assert.equal(many.code, 1);
    // A failure every object would meet ends the run: one line for the command, as cp -r prints it.
    assert.equal(many.stderr, `s3x: mv s3://${bucket}/stay/ s3://no-such-bucket-s3x-mv/: CopyObject s3://${bucket}/stay/x.bin: NoSuchBucket: the bucket does not exist (HTTP 404)\n`);
    assert.ok(await objectExists(s3, bucket, "stay/x.bin"));
  });

  it("--json: one JSON line per object (action move) and a summary (command mv)", async () => {
    await putTestObject(s3, bucket, "json/one.bin", Buffer.from("one"));
    const single = await s3x(["mv", `s3://${bucket}/json/one.bin`, `s3://${bucket}/json-to/one.bin`, "--json"]);
    assert.equal(single.code, 0, single.stderr);
    const [object, summary, ...rest] = lines(single).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(object, { action: "move", source: `s3://${bucket}/json/one.bin`, destination: `s3://${bucket}/json-to/one.bin`, size: 3, status: "ok" });
    assert.deepEqual([summary.command, summary.status, summary.transferred, summary.failed], ["mv", "ok", 1, 0]);
    assert.deepEqual(rest, []);
    await putTestObject(s3, bucket, "json/two.bin", Buffer.from("two"));
    const many = await s3x(["mv", `s3://${bucket}/json/`, `s3://${bucket}/json-to/`, "--recursive", "--json"]);
    assert.equal(many.code, 0, many.stderr);
    const records = lines(many).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(records.slice(0, -1).map((r) => [r.action, r.source, r.status]), [["move", `s3://${bucket}/json/two.bin`, "ok"]]);
    assert.deepEqual([records.at(-1)?.command, records.at(-1)?.transferred], ["mv", 1]);
    assert.equal(await objectExists(s3, bucket, "json/two.bin"), false);
  });

  it("--only-show-errors prints failures only; --quiet prints nothing about objects", async () => {
    const file = join(dir, "quiet.bin");
    await writeFile(file, "quiet");
    const ok = await s3x(["mv", file, `s3://${bucket}/quiet/quiet.bin`, "--only-show-errors"]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.length, 0);
    assert.equal(ok.stderr, "");
    assert.equal(existsSync(file), false);
    await mkdir(join(dir, "quiet-tree"), { recursive: true });
    await writeFile(join(dir, "quiet-tree", "q.txt"), "q");
    const many = await s3x(["mv", join(dir, "quiet-tree"), `s3://${bucket}/quiet-tree/`, "--recursive", "--only-show-errors"]);
    assert.equal(many.code, 0, many.stderr);
    assert.equal(many.stdout.length, 0);
    assert.equal(many.stderr, "", "no summary line either");
    assert.ok(await objectExists(s3, bucket, "quiet-tree/q.txt"));
    await writeFile(file, "again");
    const failed = await s3x(["mv", file, "s3://no-such-bucket-s3x-mv/quiet.bin", "--only-show-errors"]);
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout.length, 0);
    assert.match(failed.stderr, /^s3x: move failed: \.\/quiet\.bin to s3:\/\/no-such-bucket-s3x-mv\/quiet\.bin: .*NoSuchBucket[^\n]*\n$/);
    const quiet = await s3x(["mv", file, "s3://no-such-bucket-s3x-mv/quiet.bin", "--quiet"]);
    assert.equal(quiet.code, 1);
    assert.equal(quiet.stdout.length, 0);
    assert.equal(quiet.stderr, "");
    assert.ok(existsSync(file));
  });

  it("is a command of its own: listed in s3x --help, with examples in s3x mv --help", async () => {
    const help = await s3x(["--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout.toString(), /^ {2}s3x mv <source> <destination> +move/m);
    assert.match(help.stdout.toString(), /^ {2}s3x presign <path> /m);
    const mvHelp = await s3x(["mv", "--help"]);
    assert.equal(mvHelp.code, 0, mvHelp.stderr);
    assert.match(mvHelp.stdout.toString(), /s3x mv -r s3:\/\/bucket\/tmp\/ \.\/tmp --exclude '\*\.log'/);
  });

  it("refuses to move an object onto itself, a prefix into itself, and stdin/stdout", async () => {
    const self = await s3x(["mv", `s3://${bucket}/stay/x.bin`, `s3://${bucket}/stay/`]);
    assert.equal(self.code, 2);
    assert.match(self.stderr, /onto itself/);
    const nested = await s3x(["mv", `s3://${bucket}/stay/`, `s3://${bucket}/stay/inner/`, "--recursive"]);
    assert.equal(nested.code, 2);
    assert.match(nested.stderr, /one prefix holds the other/);
    const stream = await s3x(["mv", "-", `s3://${bucket}/stream`]);
    assert.equal(stream.code, 2);
    assert.ok(await objectExists(s3, bucket, "stay/x.bin"));
  });
});
