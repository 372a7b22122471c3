import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { assertExitedPromptly, runS3x, type RunResult } from "../support/cli.js";
import { startRecordingProxy, type RecordingProxy, type RecordedRequest } from "../support/recording-proxy.js";
import { freshBucket, objectExists, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const run = promisify(execFile);

const NO_SUCH_KEY_XML = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>';
const ACCESS_DENIED_XML = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';

/**
 * A stream that fails part-way (`s3x cat … --tar` when an object after the
 * first is gone or forbidden), manifests streamed without HEADing every
 * line first, and what `rm --from` says of keys that do not exist: through
 * the real CLI against radosgw. The recording proxy plays an object
 * deleted between the listing and its GET (a 404 or 403 for that GET only).
 */
describe("stream failures and manifests checked as reached (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let proxy: RecordingProxy;
  /** The objects under data/, in listing order. */
  const keys: string[] = [];
  const s3x = (args: string[], endpoint = s3.endpoint): Promise<RunResult> => runS3x([...args, "--endpoint-url", endpoint], { env: s3.env });

  before(async function () {
    this.timeout(180_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "streamfail");
    for (let i = 0; i < 8; i++) {
      const key = `data/s${i}.bin`;
      await putTestObject(s3, bucket, key, randomBytes(700 + i * 1000));
      keys.push(key);
    }
    proxy = await startRecordingProxy(s3.host, s3.port);
  });

  after(async () => proxy?.close());

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-streamfail-"));
    proxy.requests.length = 0;
    proxy.answer = () => undefined;
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The objects the message says were written whole, checked against what a stream-mode tarfile reader got before its error. */
  async function assertFailedTar(res: RunResult, failedKey: string): Promise<number> {
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    const said = new RegExp(`the stream stopped at s3://${bucket}/${failedKey.replace(/\./g, "\\.")}: (\\d+) objects? (?:was|were) written (?:whole )?before it`).exec(res.stderr);
    assert.ok(said, res.stderr);
    const read = await readTarStream(res.stdout);
    assert.ok(read.error !== null, `the reader ended cleanly after ${read.members.length} members: a failed stream read as a whole archive`);
    assert.equal(read.members.length, Number(said[1]), `the message counts what the reader got (${res.stderr})`);
    // A reader that only lists (skips each entry's bytes unread) is not fooled either.
    const listed = await readTarStream(res.stdout, false);
    assert.ok(listed.error !== null, `a listing reader ended cleanly after ${listed.members.join(", ")}`);
    assert.deepEqual(listed.members, read.members);
    assert.ok(!read.members.includes(failedKey));
    const gnu = await writeFile(join(dir, "out.tar"), res.stdout).then(() => run("tar", ["-tf", join(dir, "out.tar")]).then(() => 0, (err: { code: number }) => err.code));
    assert.notEqual(gnu, 0, "GNU tar rejects it too");
    return read.members.length;
  }

  for (const [status, body] of [[404, NO_SUCH_KEY_XML], [403, ACCESS_DENIED_XML]] as const) {
    it(`cat PREFIX --tar, an object after the first answering ${status} when fetched: tarfile (r|) raises, exit 1, the count is what the reader got`, async () => {
      const failedKey = keys[4]!;
      proxy.answer = (req) => (req.method === "GET" && pathOf(req) === `/${bucket}/${failedKey}` ? { status, body } : undefined);
      const res = await s3x(["cat", `s3://${bucket}/data/`, "--tar"], proxy.endpoint);
      const got = await assertFailedTar(res, failedKey);
      assert.equal(got, 4, `every object before ${failedKey}, whole`);
    });
  }

  it("cat --from --tar, a missing key in the middle of the manifest: the same failure, exit 1 (not a usage error)", async () => {
    const manifest = join(dir, "m.txt");
    const listed = [keys[0], keys[1], "data/gone.bin", keys[2], keys[3]];
    await writeFile(manifest, listed.map((k) => `s3://${bucket}/${k}`).join("\n"));
    const res = await s3x(["cat", "--from", manifest, "--tar"]);
    assert.equal(await assertFailedTar(res, "data/gone.bin"), 2, "the two objects before the missing one, whole");
    assert.match(res.stderr, /m\.txt:3: s3:\/\/\S+\/data\/gone\.bin: no such object/);
  });

  describe("a manifest of many keys", () => {
    const many: string[] = [];

    before(async function () {
      this.timeout(180_000);
      const local = await mkdtemp(join(tmpdir(), "s3x-streamfail-many-"));
      for (let i = 0; i < 300; i++) await writeFile(join(local, `m${String(i).padStart(3, "0")}.bin`), randomBytes(100));
      const up = await s3x(["cp", "-r", local, `s3://${bucket}/many/`, "--only-show-errors"]);
      assert.equal(up.code, 0, up.stderr);
      for (let i = 0; i < 300; i++) many.push(`many/m${String(i).padStart(3, "0")}.bin`);
      await rm(local, { recursive: true, force: true });
    });

    it("streams at once: the first GET goes out before the last HEAD", async () => {
      const manifest = join(dir, "many.txt");
      await writeFile(manifest, many.map((k) => `s3://${bucket}/${k}`).join("\n"));
      const res = await s3x(["cat", "--from", manifest, "--tar"], proxy.endpoint);
      assert.equal(res.code, 0, res.stderr);
      const read = await readTarStream(res.stdout);
      assert.equal(read.error, null);
      assert.deepEqual(read.members, many);
      const methods = proxy.requests.map((r) => r.method);
      const firstGet = methods.indexOf("GET");
      const lastHead = methods.lastIndexOf("HEAD");
      assert.ok(firstGet >= 0 && firstGet < lastHead, `first GET at request ${firstGet}, last HEAD at ${lastHead}: the stream waited for every HEAD`);
    });

    it("--check-manifest: every key HEADed before the first GET, as before", async () => {
      const manifest = join(dir, "many.txt");
      await writeFile(manifest, many.map((k) => `s3://${bucket}/${k}`).join("\n"));
      const res = await s3x(["cat", "--from", manifest, "--check-manifest"], proxy.endpoint);
      assert.equal(res.code, 0, res.stderr);
      const methods = proxy.requests.map((r) => r.method);
      assert.equal(methods.filter((m) => m === "HEAD").length, many.length);
      assert.ok(methods.indexOf("GET") > methods.lastIndexOf("HEAD"));
    });

    it("--check-manifest with a missing key: one line naming its line, nothing written, exit 1 (an S3 answer)", async () => {
      const manifest = join(dir, "many.txt");
      await writeFile(manifest, [...many.slice(0, 100), `s3://${bucket}/many/absent.bin`, ...many.slice(100)].map((k) => (k.startsWith("s3://") ? k : `s3://${bucket}/${k}`)).join("\n"));
      const res = await s3x(["cat", "--from", manifest, "--check-manifest"]);
      assert.equal(res.code, 1, res.stderr);
      assertExitedPromptly(res);
      assert.equal(res.stdout.length, 0);
      assert.match(res.stderr, /many\.txt:101: s3:\/\/\S+\/many\/absent\.bin: no such object/);
      assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
    });
  });

  it("a manifest naming objects in another bucket: streamed, and said on stderr with the line", async () => {
    const other = await freshBucket(s3, "streamfail-other");
    await putTestObject(s3, other, "x.bin", Buffer.from("other"));
    const manifest = join(dir, "two.txt");
    await writeFile(manifest, [`s3://${bucket}/${keys[0]}`, `s3://${bucket}/${keys[1]}`, `s3://${other}/x.bin`].join("\n"));
    const res = await s3x(["cat", "--from", manifest, "--tar"]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual((await readTarStream(res.stdout)).members, [keys[0], keys[1], "x.bin"]);
    assert.equal(res.stderr, `s3x: ${manifest} names objects in 2 buckets: "${bucket}", and "${other}" (from line 3)\n`);
  });

  it("cp --from into a directory with a missing key: the others are downloaded, the missing one named, exit 1", async () => {
    const manifest = join(dir, "cp.txt");
    await writeFile(manifest, [keys[0], "data/absent.bin", keys[1]].map((k) => `s3://${bucket}/${k}`).join("\n"));
    const out = join(dir, "out");
    const res = await s3x(["cp", "--from", manifest, out]);
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.match(res.stderr, /cp\.txt:2: s3:\/\/\S+\/data\/absent\.bin: no such object/);
    assert.deepEqual((await readdir(join(out, "data"))).sort(), ["s0.bin", "s1.bin"]);
  });

  it("rm --from with keys that do not exist: deletes the others, names the missing ones, exit 0", async () => {
    for (const key of ["rm/a.bin", "rm/b.bin"]) await putTestObject(s3, bucket, key, Buffer.from(key));
    const manifest = join(dir, "rm.txt");
    await writeFile(manifest, ["rm/a.bin", "rm/never.bin", "rm/b.bin"].map((k) => `s3://${bucket}/${k}`).join("\n"));
    const res = await s3x(["rm", "--from", manifest]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.stdout.toString().trim().split("\n").sort(), [`delete: s3://${bucket}/rm/a.bin`, `delete: s3://${bucket}/rm/b.bin`]);
    assert.match(res.stderr, /nothing to delete: \S*rm\.txt:2: s3:\/\/\S+\/rm\/never\.bin: no such object/);
    assert.match(res.stderr, /rm: 2 deleted, 0 failed, 1 missing/);
    assert.ok(!(await objectExists(s3, bucket, "rm/a.bin")));
    assert.ok(!(await objectExists(s3, bucket, "rm/b.bin")));
  });

  it("rm --from --check-manifest with a missing key: nothing deleted, exit 1", async () => {
    await putTestObject(s3, bucket, "rmc/a.bin", Buffer.from("a"));
    const manifest = join(dir, "rmc.txt");
    await writeFile(manifest, ["rmc/a.bin", "rmc/never.bin"].map((k) => `s3://${bucket}/${k}`).join("\n"));
    const res = await s3x(["rm", "--from", manifest, "--check-manifest"]);
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.match(res.stderr, /rmc\.txt:2: s3:\/\/\S+\/rmc\/never\.bin: no such object/);
    assert.ok(await objectExists(s3, bucket, "rmc/a.bin"));
  });
});

/** The request's path without its query string. */
function pathOf(req: RecordedRequest): string {
  return req.path.split("?")[0]!;
}

/** What Python's tarfile in stream mode (r|, as WebDataset) reads: each member's name and bytes, then the error it raised, if any. */
async function readTarStream(archive: Buffer, readBytes = true): Promise<{ members: string[]; error: string | null }> {
  const script = [
    "import sys, tarfile, json",
    "names, error = [], None",
    "try:",
    "    with tarfile.open(fileobj=sys.stdin.buffer, mode='r|') as t:",
    "        for m in t:",
    `            f = t.extractfile(m) if ${readBytes ? "True" : "False"} else None`,
    "            if f: f.read()",
    "            names.append(m.name)",
    "except tarfile.TarError as e:",
    "    error = repr(e)",
    "print(json.dumps({'members': names, 'error': error}))",
  ].join("\n");
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn("python3", ["-c", script]);
    let text = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (text += c));
    child.stderr.on("data", (c: Buffer) => (err += c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`python3 exited ${code}: ${err}`))));
    child.stdin.on("error", () => undefined);
    child.stdin.end(archive);
  });
  return JSON.parse(out) as { members: string[]; error: string | null };
}
