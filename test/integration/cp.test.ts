import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { HeadObjectCommand, ListMultipartUploadsCommand, ListPartsCommand } from "@aws-sdk/client-s3";
import { fileHash, randomFile, runPipeline, runS3x, sha256, S3X_BIN } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, openUploads, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startThrottleProxy } from "../support/throttle-proxy.js";

const MiB = 1024 * 1024;

describe("s3x cp (integration, real radosgw)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "cp");
    dir = await mkdtemp(join(tmpdir(), "s3x-cp-"));
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cp = (args: string[], extra: Partial<Parameters<typeof runS3x>[1]> = {}) =>
    runS3x(["cp", ...args, "--endpoint-url", s3.endpoint], { env: s3.env, ...extra });

  /** Nothing but the expected files in a directory: no temp files left behind. */
  async function assertOnlyFiles(path: string, expected: string[]): Promise<void> {
    assert.deepEqual((await readdir(path)).sort(), [...expected].sort());
  }

  // Small part sizes so every boundary case is cheap: one part = 5 MiB.
  const partArgs = ["--part-size", "5MiB", "--multipart-threshold", "5MiB"];
  const sizes: [string, number][] = [
    ["0 bytes", 0],
    ["1 byte", 1],
    ["exactly one part", 5 * MiB],
    ["one part + 1 byte", 5 * MiB + 1],
    ["100 MiB in 5 MiB parts", 100 * MiB + 777],
  ];

  const clients: [string, NodeJS.ProcessEnv][] = [["", {}]];
  const cases = [...sizes.map(([label, size]) => ({ label, size, client: clients[0] })), { label: "3 parts", size: 12 * MiB + 5, client: clients[0] }];
  for (const { label, size, client } of cases) {
    it(`round-trips ${label} through every direction${client[0]}`, async function () {
      const s3x = (args: string[], extra: Partial<Parameters<typeof runS3x>[1]> = {}) =>
        runS3x([...args, "--endpoint-url", s3.endpoint], { env: { ...s3.env, ...client[1] }, ...extra });
      const cp = (args: string[], extra: Partial<Parameters<typeof runS3x>[1]> = {}) => s3x(["cp", ...args], extra);
      const src = join(dir, `src-${size}.bin`);
      const hash = await randomFile(src, size);
      const key = `rt/${size}.bin`;

      // file → S3
      const up = await cp([src, `s3://${bucket}/${key}`, ...partArgs]);
      assert.equal(up.code, 0, up.stderr);
      assert.equal(await objectHash(s3, bucket, key), hash);

      // S3 → file
      const out = join(dir, `down-${size}`);
      await mkdir(out);
      const down = await cp([`s3://${bucket}/${key}`, join(out, "x.bin"), ...partArgs]);
      assert.equal(down.code, 0, down.stderr);
      assert.equal(await fileHash(join(out, "x.bin")), hash);
      await assertOnlyFiles(out, ["x.bin"]);

      // S3 → stdout
      const cat = await cp([`s3://${bucket}/${key}`, "-", ...partArgs]);
      assert.equal(cat.code, 0, cat.stderr);
      assert.equal(cat.stdout.length, size);
      assert.equal(sha256(cat.stdout), hash);

      // stdin → S3
      const data = await readFile(src);
      const put = await cp(["-", `s3://${bucket}/${key}.stdin`, ...partArgs], { stdin: data });
      assert.equal(put.code, 0, put.stderr);
      assert.equal(await objectHash(s3, bucket, `${key}.stdin`), hash);

      // S3 → S3, with CopyObject and with UploadPartCopy ranges
      const copy = await cp([`s3://${bucket}/${key}`, `s3://${bucket}/${key}.copy`]);
      assert.equal(copy.code, 0, copy.stderr);
      assert.equal(await objectHash(s3, bucket, `${key}.copy`), hash);
      if (size > 0) {
        const ranged = await cp([`s3://${bucket}/${key}`, `s3://${bucket}/${key}.partcopy`, "--copy-threshold", "5MiB", "--part-size", "5MiB"]);
        assert.equal(ranged.code, 0, ranged.stderr);
        assert.equal(await objectHash(s3, bucket, `${key}.partcopy`), hash);
      }
      assert.equal(await openUploads(s3, bucket), 0);
      // DELETE and POST (DeleteObjects) too.
      const removed = await s3x(["rm", `s3://${bucket}/${key}.copy`]);
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(await objectExists(s3, bucket, `${key}.copy`), false);
      const removedAll = await s3x(["rm", "--recursive", `s3://${bucket}/rt/`]);
      assert.equal(removedAll.code, 0, removedAll.stderr);
      assert.equal(await objectExists(s3, bucket, key), false);
      assert.equal(await objectExists(s3, bucket, `${key}.stdin`), false);
    });
  }

  it("prints its package version from any working directory, answered before the program loads or by it", async () => {
    const { version } = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string };
    // `--version` alone takes bin/s3x.js's short cut; with another option, the parser answers.
    for (const args of [["--version"], ["--version", "--no-progress"]]) {
      for (const cwd of [tmpdir(), "/"]) {
        const res = await runS3x(args, { env: s3.env, cwd });
        assert.equal(res.code, 0, res.stderr);
        assert.equal(res.stdout.toString(), `${version}\n`, `${args.join(" ")} from ${cwd}`);
      }
    }
  });

  it("uploads a multipart object with parts sent concurrently and reports them in --json", async () => {
    const src = join(dir, "mp.bin");
    const hash = await randomFile(src, 40 * MiB);
    const res = await cp([src, `s3://${bucket}/mp.bin`, "--part-size", "5MiB", "--json"]);
    assert.equal(res.code, 0, res.stderr);
    // JSON Lines: the object's line, then the summary.
    const stats = JSON.parse(res.stdout.toString().trim().split("\n").pop()!);
    assert.equal(stats.bytes, 40 * MiB);
    assert.equal(stats.requests, 8 + 2, "Create + 8 parts + Complete");
    assert.ok(stats.addresses.length >= 1);
    assert.equal(await objectHash(s3, bucket, "mp.bin"), hash);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "mp.bin" }));
    assert.match(head.ETag ?? "", /-8"$/, "8 parts in the multipart ETag");
  });

  it("--payload-signing never sends UNSIGNED-PAYLOAD over plain HTTP, and the server stores the same bytes", async () => {
    const src = join(dir, "unsigned.bin");
    const hash = await randomFile(src, 12 * MiB);
    const multi = await cp([src, `s3://${bucket}/unsigned-multi.bin`, "--part-size", "5MiB", "--payload-signing", "never"]);
    assert.equal(multi.code, 0, multi.stderr);
    assert.equal(await objectHash(s3, bucket, "unsigned-multi.bin"), hash);
    const single = await cp([src, `s3://${bucket}/unsigned-single.bin`, "--multipart-threshold", "64MiB"], { env: { ...s3.env, S3X_PAYLOAD_SIGNING: "never" } });
    assert.equal(single.code, 0, single.stderr);
    assert.equal(await objectHash(s3, bucket, "unsigned-single.bin"), hash);
    const bad = await cp([src, `s3://${bucket}/unsigned-bad.bin`, "--payload-signing", "sometimes"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--payload-signing must be auto, always or never, got "sometimes"\n$/);
    assert.equal(await objectExists(s3, bucket, "unsigned-bad.bin"), false);
  });

  it("uploads stdin of unknown length above the part size as multipart, while still reading", async () => {
    const data = randomBytes(23 * MiB + 5);
    const res = await cp(["-", `s3://${bucket}/stdin-big`, "--part-size", "5MiB", "--json"], { stdin: data });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await objectHash(s3, bucket, "stdin-big"), sha256(data));
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "stdin-big" }));
    assert.match(head.ETag ?? "", /-5"$/);
  });

  it("keeps keys with spaces, unicode, + and % intact", async () => {
    const key = "odd names/a b+c%20d é 日本 100%.txt";
    const src = join(dir, "odd.txt");
    const hash = await randomFile(src, 1234);
    const up = await cp([src, `s3://${bucket}/${key}`]);
    assert.equal(up.code, 0, up.stderr);
    assert.ok(await objectExists(s3, bucket, key));
    const down = await cp([`s3://${bucket}/${key}`, join(dir, "odd-back.txt")]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(await fileHash(join(dir, "odd-back.txt")), hash);
    const copy = await cp([`s3://${bucket}/${key}`, `s3://${bucket}/${key} copy`, "--copy-threshold", "5MiB"]);
    assert.equal(copy.code, 0, copy.stderr);
    assert.equal(await objectHash(s3, bucket, `${key} copy`), hash);
  });

  it("uploads to a prefix ending in / under the file's name, downloads into a directory under the key's name", async () => {
    const src = join(dir, "named.bin");
    const hash = await randomFile(src, 10);
    assert.equal((await cp([src, `s3://${bucket}/prefix/`])).code, 0);
    assert.ok(await objectExists(s3, bucket, "prefix/named.bin"));
    const into = join(dir, "into");
    await mkdir(into);
    assert.equal((await cp([`s3://${bucket}/prefix/named.bin`, into])).code, 0);
    assert.equal(await fileHash(join(into, "named.bin")), hash);
  });

  it("sets content type (guessed or given), storage class and metadata", async () => {
    const src = join(dir, "page.html");
    await writeFile(src, "<p>hi</p>");
    assert.equal((await cp([src, `s3://${bucket}/page.html`, "--metadata", "team=ml,run=7"])).code, 0);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "page.html" }));
    assert.equal(head.ContentType, "text/html");
    // An upload also stores its file's mtime (x-amz-meta-mtime, as rclone does).
    const mtime = ((await stat(src)).mtimeMs / 1000).toFixed(3);
    assert.deepEqual(head.Metadata, { team: "ml", run: "7", mtime });
    assert.equal((await cp([src, `s3://${bucket}/page.bin`, "--content-type", "application/x-test"])).code, 0);
    const head2 = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "page.bin" }));
    assert.equal(head2.ContentType, "application/x-test");
    // S3 → S3 (a CopyObject signed by s3x itself once the source's HEAD showed the bucket's route):
    // the source's type and metadata are kept, or replaced by the ones given.
    assert.equal((await cp([`s3://${bucket}/page.html`, `s3://${bucket}/page-copy.html`])).code, 0);
    const kept = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "page-copy.html" }));
    assert.equal(kept.ContentType, "text/html");
    assert.deepEqual(kept.Metadata, { team: "ml", run: "7", mtime });
    assert.equal((await cp([`s3://${bucket}/page.html`, `s3://${bucket}/page-new.html`, "--metadata", "team=cv", "--content-type", "text/plain"])).code, 0);
    const replaced = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "page-new.html" }));
    assert.equal(replaced.ContentType, "text/plain");
    assert.deepEqual(replaced.Metadata, { team: "cv" });
  });

  it("streams to a slow reader in bounded memory", async function () {
    const size = 160 * MiB;
    const data = randomBytes(size);
    await putTestObject(s3, bucket, "slow-reader.bin", data);
    // The reader takes ~40 MB/s; s3x may hold at most --max-memory of parts.
    const reader = `let n=0;const h=require('crypto').createHash('sha256');process.stdin.on('data',c=>{h.update(c);n+=c.length;process.stdin.pause();setTimeout(()=>process.stdin.resume(),c.length/40e3)});process.stdin.on('end',()=>console.log(n+' '+h.digest('hex')))`;
    const result = await new Promise<{ out: string; stats: string; code: number | null }>((resolve) => {
      const s3x = spawn(process.execPath, [S3X_BIN, "cp", `s3://${bucket}/slow-reader.bin`, "-", "--endpoint-url", s3.endpoint, "--max-memory", "32MiB", "--part-size", "4MiB", "--json"], { env: s3.env, stdio: ["ignore", "pipe", "pipe"] });
      const sink = spawn(process.execPath, ["-e", reader], { stdio: ["pipe", "pipe", "inherit"] });
      s3x.stdout.pipe(sink.stdin);
      let out = "";
      let stats = "";
      let code: number | null = null;
      sink.stdout.on("data", (c: Buffer) => (out += c));
      s3x.stderr.on("data", (c: Buffer) => (stats += c));
      s3x.on("close", (c) => (code = c));
      sink.on("close", () => resolve({ out, stats, code }));
    });
    assert.equal(result.code, 0, result.stats);
    assert.equal(result.out.trim(), `${size} ${sha256(data)}`);
    const stats = JSON.parse(result.stats.trim().split("\n").pop()!);
    assert.ok(stats.peakBufferBytes <= 32 * MiB, `buffered ${stats.peakBufferBytes} bytes`);
    // The project's memory target: --max-memory plus 150 MiB for Node, the SDK
    // and socket garbage not yet collected. Holding the 160 MiB object would show.
    assert.ok(stats.peakRssBytes < 32 * MiB + 150 * MiB, `peak RSS ${stats.peakRssBytes}`);
  });

  it("widens a pipe on stdout, stdin or a named pipe to 1 MiB (F_SETPIPE_SZ through perl), and works the same without perl", async () => {
    const data = randomBytes(3 * MiB);
    await putTestObject(s3, bucket, "pipe.bin", data);
    // The reader drains the pipe, then asks its size (F_GETPIPE_SZ = 1032).
    const reader = `perl -e 'local $/; my $d = <STDIN>; print length($d), " ", fcntl(STDIN, 1032, 0), "\\n"'`;
    const down = await runPipeline(`node "${S3X_BIN}" cp "s3://${bucket}/pipe.bin" - --endpoint-url ${s3.endpoint} --quiet | ${reader}`, s3.env);
    assert.equal(down.out, `${data.length} 1048576\n`, down.err);
    // No perl on PATH: the same bytes through the 64 KiB pipe (node itself found by its full path).
    const bare = await runPipeline(`PATH=/nonexistent "${process.execPath}" "${S3X_BIN}" cp "s3://${bucket}/pipe.bin" - --endpoint-url ${s3.endpoint} --quiet | sha256sum`, s3.env);
    assert.equal(bare.out.split(" ")[0], sha256(data), bare.err);
    // stdin: the writer, once it has written everything, sees its pipe widened too (s3x's perl
    // child runs beside the upload: the writer waits up to 60 s for it, then reports what it sees).
    const writer = `perl -e 'open(my $f, "<", $ARGV[0]) or die; binmode $f; binmode STDOUT; local $/; print STDOUT <$f>; for (1..600) { last if fcntl(STDOUT, 1032, 0) == 1048576; select(undef, undef, undef, 0.1) } print STDERR "pipe ", fcntl(STDOUT, 1032, 0), "\\n"'`;
    const source = join(dir, "pipe-up.bin");
    await writeFile(source, data);
    const up = await runPipeline(`${writer} "${source}" | node "${S3X_BIN}" cp - "s3://${bucket}/pipe-up.bin" --endpoint-url ${s3.endpoint} --quiet`, s3.env);
    assert.equal(up.err, "pipe 1048576\n");
    // A named pipe as the destination is written in place, and widened the same way.
    const fifo = join(dir, "pipe.fifo");
    const named = await runPipeline(`mkfifo "${fifo}" && { ${reader} < "${fifo}" & node "${S3X_BIN}" cp "s3://${bucket}/pipe.bin" "${fifo}" --endpoint-url ${s3.endpoint} --quiet; wait; }`, s3.env);
    assert.equal(named.out, `${data.length} 1048576\n`, named.err);
    assert.equal(await objectHash(s3, bucket, "pipe-up.bin"), sha256(data), up.err);
  });

  // What the progress line looks like while it is drawn, and the screen it leaves: terminal.test.ts (tmux).
  it("on a terminal (under script(1)'s pseudo-terminal) prints its line without errors, and --quiet prints nothing", async () => {
    const data = randomBytes(24 * MiB);
    await putTestObject(s3, bucket, "bar.bin", data);
    const target = join(dir, "bar.bin");
    // script(1) (util-linux, essential on Debian) runs s3x with a terminal on stdin, stdout and stderr.
    const onTerminal = (extra: string) =>
      runPipeline(`script -qec 'node "${S3X_BIN}" cp "s3://${bucket}/bar.bin" "${target}" --endpoint-url ${s3.endpoint} --concurrency 2 ${extra}' /dev/null`, s3.env);
    const shown = await onTerminal("");
    // Escape sequences and carriage returns aside, the object's line.
    const text = shown.out.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, "\n").replace(/\r/g, "\n");
    assert.match(text, /download: s3:\/\/\S+\/bar\.bin to \S+bar\.bin\n/, text);
    assert.doesNotMatch(text, /Error|not a function/, text);
    assert.equal(await fileHash(target), sha256(data));
    const quiet = await onTerminal("--quiet");
    assert.equal(quiet.out, "", "nothing on the terminal with --quiet");
    assert.equal(await fileHash(target), sha256(data));
  });

  it("ends quietly when the reader closes the pipe (| head -c 100)", async () => {
    await putTestObject(s3, bucket, "head.bin", randomBytes(64 * MiB));
    const script = `node "${S3X_BIN}" cp "s3://${bucket}/head.bin" - --endpoint-url ${s3.endpoint} | head -c 100 | wc -c; echo "status=\${PIPESTATUS[0]}"`;
    const res = await runPipeline(script, s3.env);
    assert.match(res.out, /^100\nstatus=141\n$/);
    assert.equal(res.err, "", "no error output, no stack trace");
  });

  describe("errors: one clear line, non-zero exit, nothing left behind", () => {
    it("no such key", async () => {
      const out = join(dir, "err-nokey");
      await mkdir(out);
      const res = await cp([`s3://${bucket}/does/not/exist`, join(out, "f")]);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /^s3x: download failed: s3:\/\/.* to .*: GET s3:\/\/.*\/does\/not\/exist .*NoSuchKey: the object does not exist \(HTTP 404\)\n$/);
      await assertOnlyFiles(out, []);
    });

    it("no such bucket", async () => {
      const res = await cp([`s3://no-such-bucket-s3x/k`, join(dir, "nb")]);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /NoSuchBucket: the bucket does not exist \(HTTP 404\)\n$/);
      assert.equal(res.stderr.split("\n").length, 2, "one line");
    });

    it("access denied (anonymous request to a private bucket)", async () => {
      const res = await cp([`s3://${bucket}/page.html`, "-", "--no-sign-request"]);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /AccessDenied: access denied \(HTTP 403\)\n$/);
    });

    it("bad credentials", async () => {
      const env = { ...s3.env, AWS_ACCESS_KEY_ID: "NOSUCHKEY0000000", AWS_SECRET_ACCESS_KEY: "wrong" };
      const res = await runS3x(["cp", `s3://${bucket}/page.html`, "-", "--endpoint-url", s3.endpoint], { env });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /InvalidAccessKeyId: the access key id is not known to the server \(check credentials\) \(HTTP 403\)\n$/);
      const env2 = { ...s3.env, AWS_SECRET_ACCESS_KEY: "wrong-secret" };
      const res2 = await runS3x(["cp", `s3://${bucket}/page.html`, "-", "--endpoint-url", s3.endpoint], { env: env2 });
      assert.equal(res2.code, 1);
      assert.match(res2.stderr, /SignatureDoesNotMatch/);
    });

    it("malformed s3:// URL", async () => {
      const res = await cp(["s3:/bucket/key", join(dir, "x")]);
      assert.equal(res.code, 2);
      assert.equal(res.stderr, 's3x: cp s3:/bucket/key ' + join(dir, "x") + ': malformed S3 URL "s3:/bucket/key": expected s3://bucket/key\n');
    });

    it("local file missing", async () => {
      const res = await cp([join(dir, "missing.bin"), `s3://${bucket}/missing`]);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /missing\.bin: no such file or directory\n$/);
      assert.equal(await objectExists(s3, bucket, "missing"), false);
    });

    it("local source is a directory", async () => {
      const res = await cp([dir, `s3://${bucket}/dir`]);
      assert.equal(res.code, 2);
      assert.match(res.stderr, /is a directory/);
    });

    it("impossible part size", async () => {
      const src = join(dir, "ps.bin");
      await randomFile(src, 1 * MiB);
      const res = await cp([src, `s3://${bucket}/ps`, "--part-size", "1MiB"]);
      assert.equal(res.code, 2);
      assert.match(res.stderr, /--part-size 1 MiB is below S3's minimum part size of 5 MiB/);
    });

    it("disk full: the error says so and no temp file remains", async function () {
      // Mounting a small tmpfs needs root: skipped on a developer's machine, required in CI.
      if (process.getuid?.() !== 0) {
        if (process.env.CI) throw new Error("the disk-full test needs root in CI");
        this.skip();
      }
      const mnt = await mkdtemp(join(tmpdir(), "s3x-full-"));
      await putTestObject(s3, bucket, "big-for-disk.bin", randomBytes(12 * MiB));
      await run("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]);
      try {
        const res = await cp([`s3://${bucket}/big-for-disk.bin`, join(mnt, "f.bin")]);
        assert.equal(res.code, 1);
        assert.match(res.stderr, /no space left on device \(disk full\)\n$/);
        await assertOnlyFiles(mnt, []);
      } finally {
        await run("umount", [mnt]);
        await rm(mnt, { recursive: true, force: true });
      }
    });
  });

  describe("through a throttling proxy (real TCP, real server)", () => {
    it("Ctrl-C before any part is stored aborts the upload: exit 130, no upload left, no object", async () => {
      const proxy = await startThrottleProxy(s3.host, s3.port);
      try {
        const src = join(dir, "int-up.bin");
        await randomFile(src, 60 * MiB);
        // No 5 MiB part can complete: the proxy holds everything after 2 MiB.
        proxy.holdAfter(2 * MiB);
        let partsAtInterrupt = -1;
        const res = await runS3x(["cp", src, `s3://${bucket}/interrupted-up`, "--endpoint-url", proxy.endpoint, "--part-size", "5MiB", "--concurrency", "2"], {
          env: { ...s3.env, S3X_STATE_DIR: join(dir, "state-int-up") },
          onSpawn: (child) => {
            child.stdin!.end();
            void (async () => {
              // Interrupt once the multipart upload exists (however slowly a loaded machine starts the CLI).
              const upload = await pollUntil(async () => (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: "interrupted-up" }))).Uploads?.[0]);
              const parts = await s3.client.send(new ListPartsCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
              partsAtInterrupt = parts.Parts?.length ?? 0;
              // The clean-up (AbortMultipartUpload) must get through: let it, at a pace no 5 MiB part can finish at.
              proxy.setRate(64 * 1024);
              proxy.release();
              child.kill("SIGINT");
            })();
          },
        });
        assert.equal(partsAtInterrupt, 0, "interrupted with the upload open and no part stored");
        assert.equal(res.code, 130, res.stderr);
        assert.match(res.stderr, /interrupted by SIGINT/);
        assert.equal(await openUploads(s3, bucket), 0, "multipart upload aborted");
        assert.equal(await objectExists(s3, bucket, "interrupted-up"), false);
      } finally {
        await proxy.close();
      }
    });

    it("Ctrl-C after parts are stored keeps the upload for --resume, which finishes it", async () => {
      const proxy = await startThrottleProxy(s3.host, s3.port, 4 * MiB);
      const env = { ...s3.env, S3X_STATE_DIR: join(dir, "state-int-keep") };
      try {
        const src = join(dir, "int-keep.bin");
        const hash = await randomFile(src, 60 * MiB);
        const args = ["cp", src, `s3://${bucket}/interrupted-keep`, "--endpoint-url", proxy.endpoint, "--part-size", "5MiB", "--concurrency", "2"];
        // The upload cannot finish before the interrupt: the proxy holds it half-way.
        proxy.holdAfter(30 * MiB);
        const res = await runS3x(args, {
          env,
          onSpawn: (child) => {
            child.stdin!.end();
            void (async () => {
              // Interrupt once the server holds a part.
              await pollUntil(async () => {
                const upload = (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: "interrupted-keep" }))).Uploads?.[0];
                if (!upload) return undefined;
                const parts = await s3.client.send(new ListPartsCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
                return (parts.Parts?.length ?? 0) > 0 || undefined;
              });
              // What s3x asks on its way out must get through; no more parts meanwhile.
              proxy.setRate(64 * 1024);
              proxy.release();
              child.kill("SIGINT");
            })();
          },
        });
        assert.equal(res.code, 130, res.stderr);
        assert.match(res.stderr, /kept the interrupted upload of s3:\/\/\S+\/interrupted-keep \(upload ID \S+, \d+ parts stored\): run the same command with --resume to finish it/);
        assert.equal(await objectExists(s3, bucket, "interrupted-keep"), false);
        proxy.setRate(0);
        proxy.release();
        const resumed = await runS3x([...args, "--resume"], { env });
        assert.equal(resumed.code, 0, resumed.stderr);
        assert.equal(await objectHash(s3, bucket, "interrupted-keep"), hash);
        assert.equal(await openUploads(s3, bucket), 0);
      } finally {
        await proxy.close();
      }
    });

    it("Ctrl-C during a download keeps the partial file and its journal for --resume", async () => {
      const data = randomBytes(40 * MiB);
      await putTestObject(s3, bucket, "int-down.bin", data);
      const proxy = await startThrottleProxy(s3.host, s3.port, 4 * MiB);
      try {
        const out = join(dir, "int-down");
        await mkdir(out);
        const args = ["cp", `s3://${bucket}/int-down.bin`, join(out, "f.bin"), "--endpoint-url", proxy.endpoint, "--concurrency", "2", "--part-size", "1MiB"];
        // The download cannot finish before the interrupt: the proxy holds it half-way.
        proxy.holdAfter(20 * MiB);
        const res = await runS3x(args, {
          env: s3.env,
          onSpawn: (child) => {
            child.stdin!.end();
            void (async () => {
              // Interrupt once a range is on disk (the journal has more than its header line).
              const journal = join(out, ".f.bin.s3x-part.journal");
              await pollUntil(async () => (await readFile(journal, "utf8").catch(() => "")).split("\n").length >= 3 || undefined);
              proxy.setRate(64 * 1024);
              proxy.release();
              child.kill("SIGINT");
            })();
          },
        });
        assert.equal(res.code, 130, res.stderr);
        assert.match(res.stderr, /kept the partial download of \S+ \(\d+ of 41943040 bytes in \S+\.f\.bin\.[0-9a-f]{8}\.s3x-part\): run the same command with --resume to finish it/);
        // The run's own temporary file (its name unique per run), its journal, and no lock once it has ended.
        const kept = (await readdir(out)).sort();
        assert.equal(kept.length, 2, kept.join(", "));
        assert.match(kept[0]!, /^\.f\.bin\.[0-9a-f]{8}\.s3x-part$/);
        assert.equal(kept[1], ".f.bin.s3x-part.journal");
        proxy.setRate(0);
        proxy.release();
        const resumed = await runS3x([...args, "--resume"], { env: s3.env });
        assert.equal(resumed.code, 0, resumed.stderr);
        assert.equal(await fileHash(join(out, "f.bin")), sha256(data));
        await assertOnlyFiles(out, ["f.bin"]);
      } finally {
        await proxy.close();
      }
    });

    it("an object replaced mid-download fails clearly (If-Match) and leaves nothing", async () => {
      await putTestObject(s3, bucket, "changing.bin", randomBytes(16 * MiB));
      // The proxy holds the download after 2 MiB until the object is replaced: the next range's If-Match must fail.
      const proxy = await startThrottleProxy(s3.host, s3.port, 2 * MiB);
      proxy.holdAfter(2 * MiB);
      try {
        const out = join(dir, "changing");
        await mkdir(out);
        const res = await runS3x(["cp", `s3://${bucket}/changing.bin`, join(out, "f.bin"), "--endpoint-url", proxy.endpoint, "--concurrency", "1", "--part-size", "1MiB"], {
          env: s3.env,
          onSpawn: (child) => {
            child.stdin!.end();
            // Replace the object once the download is under way (2 MiB relayed
            // and held: the first range and its ETag have arrived), however
            // slowly a loaded machine starts the CLI.
            const replaceWhenStarted = async (): Promise<void> => {
              await pollUntil(async () => proxy.holding || undefined);
              await putTestObject(s3, bucket, "changing.bin", randomBytes(1024));
              proxy.release();
            };
            void replaceWhenStarted();
          },
        });
        assert.equal(res.code, 1);
        assert.match(res.stderr, /PreconditionFailed: the object changed during the transfer \(HTTP 412\)[^\n]*\n$/);
        await assertOnlyFiles(out, []);
      } finally {
        await proxy.close();
      }
    });

    it("connections reset mid-body are retried and resumed: bytes intact", async () => {
      const data = randomBytes(24 * MiB);
      await putTestObject(s3, bucket, "resets.bin", data);
      const proxy = await startThrottleProxy(s3.host, s3.port);
      try {
        proxy.resetNext(3, 1 * MiB);
        const res = await runS3x(["cp", `s3://${bucket}/resets.bin`, "-", "--endpoint-url", proxy.endpoint, "--part-size", "4MiB", "--json"], { env: s3.env });
        assert.equal(res.code, 0, res.stderr);
        assert.equal(sha256(res.stdout), sha256(data));
        const stats = JSON.parse(res.stderr.trim().split("\n").pop()!);
        assert.ok(stats.retries >= 1, `retries: ${stats.retries}`);
        assert.ok(proxy.resets >= 1);
      } finally {
        await proxy.close();
      }
    });

    it("gives up after bounded attempts on a dead endpoint with a clear message", async () => {
      const proxy = await startThrottleProxy(s3.host, s3.port);
      proxy.resetNext(1000, 0);
      try {
        const res = await runS3x(["cp", `s3://${bucket}/resets.bin`, "-", "--endpoint-url", proxy.endpoint, "--max-attempts", "3"], { env: s3.env });
        assert.equal(res.code, 1);
        assert.match(res.stderr, /GET s3:\/\/.*resets\.bin bytes=0-8388607: .*(ECONNRESET|UND_ERR_SOCKET|other side closed).* after 3 attempts\n$/);
        // Bounded by attempts, not by time: a connection per attempt (and the first
        // contact's), not an endless series of them.
        assert.ok(proxy.connections >= 3 && proxy.connections <= 4, `${proxy.connections} connections`);
      } finally {
        await proxy.close();
      }
    });
  });
});

/** Checks `probe` every 50 ms until it returns a value: waits on what the test can observe, not on time. */
async function pollUntil<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: "inherit" });
    p.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}`))));
  });
}

