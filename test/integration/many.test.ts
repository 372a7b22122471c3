import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, stat, symlink, utimes, writeFile, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { fileHash, runPipeline, runS3x, S3X_BIN, sha256 } from "../support/cli.js";
import { freshBucket, objectHash, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { misleadingKeys } from "../support/misleading-keys.js";

const MiB = 1024 * 1024;

/** relative path → sha256 of every file under `root`. */
async function treeHashes(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(dir: string, rel: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const relative = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path, relative);
      else out.set(relative, await fileHash(path));
    }
  }
  await walk(root, "");
  return out;
}

async function allKeys(s3: TestS3, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

/**
 * The "upload: …" / "download: …" lines a command printed, sorted, with
 * local paths made absolute again (s3x prints them relative to its working
 * directory, as aws-cli does).
 */
function actions(stdout: Buffer): string[] {
  const absolute = (path: string) => (path.startsWith("s3://") ? path : resolve(path));
  return stdout
    .toString()
    .split("\n")
    .filter((l) => /^(\(dryrun\) )?(upload|download|copy|delete):/.test(l))
    .map((l) => {
      const [, head, from, to] = /^(.*?: )(.*?)(?: to (.*))?$/.exec(l)!;
      return `${head}${absolute(from)}${to === undefined ? "" : ` to ${absolute(to)}`}`;
    })
    .sort();
}

describe("s3x cp --recursive, sync, ls, rm (integration, real radosgw)", function () {
  // A hang guard, not a speed target: each run of s3x may take up to 300 s
  // (timeoutMs below), and a tree round-trip took 52 s idle-ish, >120 s at load ~30.
  this.timeout(600_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let tree: string;
  let treeHash: Map<string, string>;

  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env, timeoutMs: 300_000 });

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "many");
    dir = await mkdtemp(join(tmpdir(), "s3x-many-"));
    tree = join(dir, "tree");
    // Nested folders, empty files, unicode and space names, 2,000 small files, a few multipart files.
    await mkdir(join(tree, "nested/deeper/deepest"), { recursive: true });
    await mkdir(join(tree, "with space/ünïcødé 日本"), { recursive: true });
    await mkdir(join(tree, "samples"), { recursive: true });
    await writeFile(join(tree, "empty.bin"), "");
    await writeFile(join(tree, "nested/deeper/deepest/empty too"), "");
    await writeFile(join(tree, "with space/ünïcødé 日本/naïve file+%.txt"), "unicode");
    await writeFile(join(tree, "nested/a.txt"), "a");
    for (let i = 0; i < 2000; i++) await writeFile(join(tree, "samples", `s${String(i).padStart(4, "0")}.bin`), randomBytes(512 + (i % 7) * 300));
    for (let i = 0; i < 3; i++) await writeFile(join(tree, "nested/deeper", `shard-${i}.bin`), randomBytes(12 * MiB + i));
    treeHash = await treeHashes(tree);
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("round-trips a tree: directory → prefix → directory and prefix → prefix, file by file", async () => {
    const up = await s3x(["cp", "--recursive", tree, `s3://${bucket}/ds/`, "--part-size", "5MiB"]);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(actions(up.stdout).length, treeHash.size);
    assert.equal((await allKeys(s3, bucket, "ds/")).length, treeHash.size);

    const back = join(dir, "back");
    const down = await s3x(["cp", "-r", `s3://${bucket}/ds`, back, "--part-size", "5MiB"]);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(await treeHashes(back), treeHash);

    const copy = await s3x(["cp", "-r", `s3://${bucket}/ds/`, `s3://${bucket}/ds-copy/`, "--copy-threshold", "5MiB", "--part-size", "5MiB"]);
    assert.equal(copy.code, 0, copy.stderr);
    const back2 = join(dir, "back2");
    assert.equal((await s3x(["cp", "-r", `s3://${bucket}/ds-copy/`, back2])).code, 0);
    assert.deepEqual(await treeHashes(back2), treeHash);
    assert.equal(await openUploads(s3, bucket), 0);
  });

  it("copies a listed prefix with one CopyObject per object (no HEAD), keeping each object's type and metadata", async () => {
    const bodies = new Map(Array.from({ length: 12 }, (_, i) => [`k${i}.bin`, randomBytes(100 + i)] as const));
    for (const [name, body] of bodies) {
      await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: `onecall/${name}`, Body: body, ContentType: "application/x-sample", Metadata: { shard: name } }));
    }
    const res = await s3x(["cp", "-r", `s3://${bucket}/onecall/`, `s3://${bucket}/onecall-copy/`, "--json"]);
    assert.equal(res.code, 0, res.stderr);
    const summary = JSON.parse(res.stdout.toString().trim().split("\n").pop()!) as { requests: number };
    assert.equal(summary.requests, 1 + bodies.size, "one listing page, then one CopyObject per object");
    for (const [name, body] of bodies) {
      assert.equal(await objectHash(s3, bucket, `onecall-copy/${name}`), sha256(body), name);
      const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: `onecall-copy/${name}` }));
      assert.equal(head.ContentType, "application/x-sample");
      assert.deepEqual(head.Metadata, { shard: name });
    }
    // sync between prefixes copies the same way; a second sync copies nothing.
    const sync = await s3x(["sync", `s3://${bucket}/onecall/`, `s3://${bucket}/onecall-sync/`, "--json"]);
    assert.equal(sync.code, 0, sync.stderr);
    for (const [name, body] of bodies) assert.equal(await objectHash(s3, bucket, `onecall-sync/${name}`), sha256(body), name);
    const again = await s3x(["sync", `s3://${bucket}/onecall/`, `s3://${bucket}/onecall-sync/`, "--json"]);
    assert.equal(again.code, 0, again.stderr);
    const lines = again.stdout.toString().trim().split("\n");
    assert.equal(JSON.parse(lines.pop()!).requests, 2, "two listings, no copy");
    assert.deepEqual(lines, [], "nothing reported copied");
  });

  it("downloads keys with every character class a URL path escapes, signed by s3x itself after the SDK's first GET", async () => {
    // The first key's GET goes through the SDK and teaches the route; every later one
    // is built and signed by s3/request.ts (radosgw checks each signature).
    const keys = ["esc/a b+c%20d&e=f?g#h.bin", "esc/!'()*~-_.bin", "esc/ünïcødé 日本/naïve.bin", "esc/semi;colon,comma:at@dollar$.bin", "esc/tab\there.bin"];
    const bodies = new Map(keys.map((k) => [k.slice("esc/".length), randomBytes(1000 + k.length)]));
    for (const key of keys) await putTestObject(s3, bucket, key, bodies.get(key.slice("esc/".length))!);
    const target = join(dir, "esc");
    const res = await s3x(["cp", "-r", `s3://${bucket}/esc/`, target, "--json"]);
    assert.equal(res.code, 0, res.stderr);
    const got = await treeHashes(target);
    assert.deepEqual([...got.keys()].sort(), [...bodies.keys()].sort());
    for (const [name, body] of bodies) assert.equal(got.get(name), sha256(body), name);
  });

  it("filters with aws-cli semantics on a real upload", async () => {
    const res = await s3x(["cp", "-r", tree, `s3://${bucket}/filtered/`, "--exclude", "*", "--include", "*.txt"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await allKeys(s3, bucket, "filtered/"), ["filtered/nested/a.txt", "filtered/with space/ünïcødé 日本/naïve file+%.txt"]);
    const none = await s3x(["cp", "-r", tree, `s3://${bucket}/none/`, "--include", "*.txt", "--exclude", "*"]);
    assert.equal(none.code, 0);
    assert.deepEqual(await allKeys(s3, bucket, "none/"), []);
    const noSamples = await s3x(["cp", "-r", tree, `s3://${bucket}/nosamples/`, "--exclude", "samples/*", "--exclude", "*.bin", "--include", "empty.bin", "--dryrun"]);
    assert.deepEqual(
      actions(noSamples.stdout).map((l) => l.replace(/ to .*/, "").replace(tree + "/", "")),
      ["(dryrun) upload: empty.bin", "(dryrun) upload: nested/a.txt", "(dryrun) upload: nested/deeper/deepest/empty too", "(dryrun) upload: with space/ünïcødé 日本/naïve file+%.txt"],
    );
    assert.deepEqual(await allKeys(s3, bucket, "nosamples/"), [], "dry run uploads nothing");
  });

  describe("sync", () => {
    let local: string;
    let prefix: string;

    before(async function () {
      this.timeout(300_000);
      local = join(dir, "sync-src");
      await mkdir(join(local, "sub"), { recursive: true });
      for (let i = 0; i < 50; i++) await writeFile(join(local, "sub", `f${i}.txt`), `file ${i}\n`);
      await writeFile(join(local, "model.bin"), randomBytes(11 * MiB));
      prefix = `s3://${bucket}/ckpt/`;
      const first = await s3x(["sync", local, prefix, "--part-size", "5MiB"]);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(actions(first.stdout).length, 51);
    });

    it("an unchanged tree syncs with zero transfers, both directions", async () => {
      const again = await s3x(["sync", local, prefix]);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(actions(again.stdout), []);
      const down = join(dir, "sync-down");
      const first = await s3x(["sync", prefix, down]);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(actions(first.stdout).length, 51);
      assert.deepEqual(await treeHashes(down), await treeHashes(local));
      const second = await s3x(["sync", prefix, down]);
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual(actions(second.stdout), [], "downloads took the objects' LastModified as mtime");
      const s3s3 = await s3x(["sync", prefix, `s3://${bucket}/ckpt-mirror/`]);
      assert.equal(actions(s3s3.stdout).length, 51);
      assert.deepEqual(actions((await s3x(["sync", prefix, `s3://${bucket}/ckpt-mirror/`])).stdout), []);
    });

    it("a one-byte change is uploaded, and only it", async () => {
      await writeFile(join(local, "sub", "f7.txt"), "file 7!\n");
      const res = await s3x(["sync", local, prefix]);
      assert.deepEqual(actions(res.stdout), [`upload: ${join(local, "sub/f7.txt")} to ${prefix}sub/f7.txt`]);
      assert.equal(await objectHash(s3, bucket, "ckpt/sub/f7.txt"), sha256(Buffer.from("file 7!\n")));
    });

    it("a same-size change with a newer mtime is uploaded", async () => {
      await writeFile(join(local, "sub", "f8.txt"), "FILE 8\n");
      const future = new Date(Date.now() + 120_000);
      await utimes(join(local, "sub", "f8.txt"), future, future);
      const res = await s3x(["sync", local, prefix]);
      assert.deepEqual(actions(res.stdout), [`upload: ${join(local, "sub/f8.txt")} to ${prefix}sub/f8.txt`]);
      // Back to the past, or every later sync would see a newer source again (as aws-cli would).
      const past = new Date(Date.now() - 3600_000);
      await utimes(join(local, "sub", "f8.txt"), past, past);
    });

    it("a newer object is downloaded over an older local file", async () => {
      const down = join(dir, "sync-down2");
      await s3x(["sync", prefix, down]);
      const old = new Date(Date.now() - 3600_000);
      await utimes(join(down, "sub", "f9.txt"), old, old);
      await writeFile(join(down, "sub", "f9.txt"), "LOCAL9\n"); // same size as "file 9\n"
      await utimes(join(down, "sub", "f9.txt"), old, old);
      const res = await s3x(["sync", prefix, down]);
      assert.deepEqual(actions(res.stdout), [`download: ${prefix}sub/f9.txt to ${join(down, "sub/f9.txt")}`]);
    });

    it("a deleted file stays in S3 without --delete, goes with it; --dryrun changes nothing", async () => {
      await unlink(join(local, "sub", "f1.txt"));
      await unlink(join(local, "sub", "f2.txt"));
      const without = await s3x(["sync", local, prefix]);
      assert.deepEqual(actions(without.stdout), []);
      assert.ok((await allKeys(s3, bucket, "ckpt/sub/f1.txt")).length === 1);

      const dry = await s3x(["sync", local, prefix, "--delete", "--dryrun"]);
      assert.deepEqual(actions(dry.stdout), [`(dryrun) delete: ${prefix}sub/f1.txt`, `(dryrun) delete: ${prefix}sub/f2.txt`]);
      assert.ok((await allKeys(s3, bucket, "ckpt/sub/f1.txt")).length === 1, "dry run deleted nothing");

      // --delete never deletes what the filters exclude.
      const filtered = await s3x(["sync", local, prefix, "--delete", "--exclude", "sub/f2.txt"]);
      assert.deepEqual(actions(filtered.stdout), [`delete: ${prefix}sub/f1.txt`]);
      assert.deepEqual(await allKeys(s3, bucket, "ckpt/sub/f1.txt"), []);
      assert.equal((await allKeys(s3, bucket, "ckpt/sub/f2.txt")).length, 1);
    });

    it("--delete on download removes local files missing from the prefix", async () => {
      const down = join(dir, "sync-down3");
      await s3x(["sync", prefix, down]);
      await writeFile(join(down, "stray.txt"), "not in S3");
      const res = await s3x(["sync", prefix, down, "--delete"]);
      assert.deepEqual(actions(res.stdout), [`delete: ${join(down, "stray.txt")}`]);
      await assert.rejects(stat(join(down, "stray.txt")));
    });
  });

  it("refuses malicious keys and never writes outside the destination", async () => {
    const evil = await freshBucket(s3, "evil");
    for (const key of ["../escape", "/abs", "a/../../b", "x/../../../../tmp-escape-s3x", "ok/fine.txt", "marker/"]) {
      await putTestObject(s3, evil, key, Buffer.from(`data of ${key}`));
    }
    const outer = await mkdtemp(join(tmpdir(), "s3x-evil-"));
    const dest = join(outer, "inside", "dest");
    const res = await s3x(["cp", "-r", `s3://${evil}`, dest]);
    assert.equal(res.code, 1, "some objects failed");
    for (const key of ["../escape", "/abs", "a/../../b", "x/../../../../tmp-escape-s3x"]) {
      assert.ok(res.stderr.includes(`refused key "${key}"`), `${key} reported: ${res.stderr}`);
    }
    // "marker/" holds bytes, so it is no folder marker: refused as aws-cli fails it.
    assert.ok(res.stderr.includes(`refused key "marker/"`), res.stderr);
    // Nothing but dest/ok/fine.txt was written anywhere under outer.
    assert.deepEqual(await readdir(outer), ["inside"]);
    assert.deepEqual(await readdir(join(outer, "inside")), ["dest"]);
    assert.deepEqual((await readdir(dest)).sort(), ["ok"]);
    assert.deepEqual(await readdir(join(dest, "ok")), ["fine.txt"]);
    await assert.rejects(stat(join(tmpdir(), "tmp-escape-s3x")));
    await rm(outer, { recursive: true, force: true });
  });

  it("follows symlinks by default, skips them with --no-follow-symlinks, and reports loops", async () => {
    const root = join(dir, "links");
    await mkdir(join(root, "real"), { recursive: true });
    await writeFile(join(root, "real", "data.txt"), "linked data");
    await symlink(join(root, "real"), join(root, "alias"));
    await symlink(root, join(root, "real", "loop"));
    const followed = await s3x(["cp", "-r", root, `s3://${bucket}/links/`, "--dryrun"]);
    assert.equal(followed.code, 1, "the loop is reported as a failure");
    assert.match(followed.stderr, /symlink loop/);
    assert.deepEqual(
      actions(followed.stdout).map((l) => l.replace(/ to .*/, "").replace(root + "/", "")),
      ["(dryrun) upload: alias/data.txt", "(dryrun) upload: real/data.txt"],
    );
    const skipped = await s3x(["cp", "-r", root, `s3://${bucket}/links/`, "--no-follow-symlinks"]);
    assert.equal(skipped.code, 0, skipped.stderr);
    assert.deepEqual(await allKeys(s3, bucket, "links/"), ["links/real/data.txt"]);
  });

  it("ls lists buckets, one level with PRE, --recursive with --summarize, and --json", async () => {
    const buckets = await s3x(["ls"]);
    assert.match(buckets.stdout.toString(), new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d ${bucket}$`, "m"));
    const level = (await s3x(["ls", `s3://${bucket}/ds/`])).stdout.toString();
    assert.match(level, /^ +PRE nested\/$/m);
    assert.match(level, /^ +PRE samples\/$/m);
    assert.match(level, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +0 empty\.bin$/m);
    const all = (await s3x(["ls", "--recursive", "--summarize", "--human-readable", `s3://${bucket}/ds/`])).stdout.toString();
    assert.match(all, new RegExp(`Total Objects: ${treeHash.size}\\n`));
    assert.match(all, /ds\/samples\/s1999\.bin$/m);
    const json = (await s3x(["ls", "--json", `s3://${bucket}/ds/nested/deeper/`])).stdout.toString().trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(json.some((e) => e.key === "ds/nested/deeper/shard-0.bin" && e.size === 12 * MiB));
    assert.ok(json.some((e) => e.prefix === `s3://${bucket}/ds/nested/deeper/deepest/`));
    // Shared options before the command, as aws-cli users write them.
    const before = await runS3x(["--endpoint-url", s3.endpoint, "--quiet", "--json", "ls", `s3://${bucket}/ds/nested/deeper/`], { env: s3.env });
    assert.equal(before.code, 0, before.stderr);
    assert.deepEqual(before.stdout.toString().trim().split("\n").map((l) => JSON.parse(l)), json);
  });

  it("lists a prefix in key ranges at once (ls -r, cp -r, rm -r): every key once, in S3's order, whatever the keys", async function () {
    this.timeout(300_000);
    // Keys that mislead the range planner (see misleadingKeys).
    const keys = misleadingKeys("mix/");
    const body = Buffer.from("k");
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((key) => putTestObject(s3, bucket, key, body)));
    const inS3Order = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

    for (const options of [["--page-size", "25"], ["--page-size", "1000"], ["--page-size", "25", "--list-ranges", "1"]]) {
      const listed = await s3x(["ls", "--recursive", "--json", ...options, `s3://${bucket}/mix/`]);
      assert.equal(listed.code, 0, listed.stderr);
      const got = listed.stdout.toString().trim().split("\n").map((l) => (JSON.parse(l) as { key: string }).key);
      assert.deepEqual(got, inS3Order, `ls ${options.join(" ")}`);
    }
    const target = join(dir, "mix");
    const down = await s3x(["cp", "-r", "--page-size", "25", `s3://${bucket}/mix/`, target]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(actions(down.stdout).length, keys.length);
    const removed = await s3x(["rm", "-r", "--page-size", "25", `s3://${bucket}/mix/`]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(await allKeys(s3, bucket, "mix/"), []);

    const bad = await s3x(["ls", "--page-size", "0", `s3://${bucket}/mix/`]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr.toString(), /--page-size must be a whole number from 1 to 1000, got 0/);
    const badRanges = await s3x(["ls", "-r", "--list-ranges", "0", `s3://${bucket}/mix/`]);
    assert.equal(badRanges.code, 2);
    assert.match(badRanges.stderr.toString(), /--list-ranges must be a whole number of at least 1, got 0/);
  });

  it("ends quietly with 141 when the reader of its output goes away (ls, cp -r, rm --dryrun | head -1), leaving no partial files", async () => {
    // ~2,000 lines: far more than a pipe holds, so s3x meets the closed pipe.
    const piped = (command: string) =>
      runPipeline(`node "${S3X_BIN}" ${command} --endpoint-url ${s3.endpoint} | head -1 | wc -l; echo "status=\${PIPESTATUS[0]}"`, s3.env);
    const target = join(dir, "cut-off");
    for (const command of [`ls --recursive s3://${bucket}/ds/`, `ls --recursive --json s3://${bucket}/ds/`, `rm --recursive --dryrun s3://${bucket}/ds/`, `cp --recursive s3://${bucket}/ds/samples/ "${target}"`]) {
      const res = await piped(command);
      assert.equal(res.out, "1\nstatus=141\n", command);
      assert.equal(res.err, "", `${command}: no error output, no stack trace`);
    }
    const left = (await readdir(target).catch(() => [] as string[])).filter((name) => name.includes(".s3x-part"));
    assert.deepEqual(left, [], "no temporary files left by the cut-off download");
    assert.equal((await allKeys(s3, bucket, "ds/")).length, treeHash.size, "rm --dryrun deleted nothing");
  });

  it("stops at the first failure every object would meet (no such bucket, unknown access key) with one error line", async () => {
    const missing = `${bucket}-missing`;
    for (const [args, env, code] of [
      [["cp", "-r", tree, `s3://${missing}/ds/`], s3.env, "NoSuchBucket"],
      [["cp", "-r", tree, `s3://${missing}/ds/`, "--json"], s3.env, "NoSuchBucket"],
      [["sync", tree, `s3://${missing}/ds/`], s3.env, "NoSuchBucket"],
      [["cp", "-r", tree, `s3://${bucket}/unknown-key/`], { ...s3.env, AWS_ACCESS_KEY_ID: "S3XUNKNOWNACCESSKEY0" }, "InvalidAccessKeyId"],
    ] as const) {
      const res = await runS3x([...args, "--endpoint-url", s3.endpoint], { env, timeoutMs: 300_000 });
      assert.equal(res.code, 1, `${args.join(" ")}: ${res.stderr}`);
      const lines = res.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `${args.join(" ")}: one line, got ${lines.length}`);
      assert.match(lines[0], new RegExp(`^s3x: (cp|sync) .*: ${code}: `));
    }
    assert.deepEqual(await allKeys(s3, bucket, "unknown-key/"), []);
  });

  it("rm deletes one key, or a prefix in DeleteObjects batches with filters and --dryrun", async () => {
    const one = await s3x(["rm", `s3://${bucket}/ds-copy/empty.bin`]);
    assert.equal(one.code, 0, one.stderr);
    const dry = await s3x(["rm", "-r", `s3://${bucket}/ds-copy/`, "--dryrun"]);
    assert.equal(actions(dry.stdout).length, treeHash.size - 1);
    assert.equal((await allKeys(s3, bucket, "ds-copy/")).length, treeHash.size - 1);
    const keepTxt = await s3x(["rm", "-r", `s3://${bucket}/ds-copy/`, "--exclude", "*.txt", "--json"]);
    assert.equal(keepTxt.code, 0, keepTxt.stderr);
    assert.deepEqual(await allKeys(s3, bucket, "ds-copy/"), ["ds-copy/nested/a.txt", "ds-copy/with space/ünïcødé 日本/naïve file+%.txt"]);
    const bad = await s3x(["rm", `s3://${bucket}/ds-copy/`]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /names a prefix; use --recursive/);
  });
});
