import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileHash, runS3x, sha256, type RunResult } from "../support/cli.js";
import { freshBucket, objectExists, objectHash, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { startRecordingProxy, type RecordingProxy } from "../support/recording-proxy.js";

const ACCESS_DENIED_XML = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';

/**
 * mv whose copy succeeds but whose removal of the source is refused (a
 * policy that allows reading and writing but not deleting): the move has
 * not happened, so it is reported as failed, never as `move:`. radosgw
 * grants this user every right, so a FAKE answers: the recording proxy
 * replies 403 to every DeleteObject; all else is radosgw's own answer.
 */
describe("s3x mv when the source's deletion is refused (integration, real radosgw behind a fake proxy)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let proxy: RecordingProxy;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", proxy.endpoint], { env: s3.env, cwd: dir });
  const lines = (res: RunResult): string[] => res.stdout.toString().split("\n").filter((l) => l !== "");

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "mvdeny");
    dir = await mkdtemp(join(tmpdir(), "s3x-mv-deny-"));
    proxy = await startRecordingProxy(s3.host, s3.port);
    proxy.answer = (req) => (req.method === "DELETE" ? { status: 403, body: ACCESS_DENIED_XML } : undefined);
  });
  after(async () => proxy?.close());

  it("S3 → S3: the copy is made, the source stays, and the move is reported failed (exit 1)", async () => {
    const data = randomBytes(40_000);
    await putTestObject(s3, bucket, "s2s/one.bin", data);
    const res = await s3x(["mv", `s3://${bucket}/s2s/one.bin`, `s3://${bucket}/s2s-to/one.bin`]);
    assert.equal(res.code, 1, res.stderr);
    assert.deepEqual(lines(res), [], "no move: line for a move that did not happen");
    assert.match(res.stderr, new RegExp(`^s3x: move failed: s3://${bucket}/s2s/one\\.bin to s3://${bucket}/s2s-to/one\\.bin: .*AccessDenied[^\\n]*\\n$`));
    assert.ok(proxy.answered.some((r) => r.method === "DELETE" && r.path.includes("s2s/one.bin")), "the DeleteObject was sent, after the copy");
    assert.equal(await objectHash(s3, bucket, "s2s/one.bin"), sha256(data));
    assert.equal(await objectHash(s3, bucket, "s2s-to/one.bin"), sha256(data));
  });

  it("S3 → file: the file is in place, the object stays, and --json says failed", async () => {
    const data = randomBytes(30_000);
    await putTestObject(s3, bucket, "down/two.bin", data);
    const res = await s3x(["mv", `s3://${bucket}/down/two.bin`, "two.bin", "--json"]);
    assert.equal(res.code, 1, res.stderr);
    const [object, summary] = lines(res).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual([object.action, object.status], ["move", "failed"]);
    assert.match(String(object.error), /AccessDenied/);
    assert.deepEqual([summary.command, summary.status, summary.failed], ["mv", "failed", 1]);
    assert.equal(await fileHash(join(dir, "two.bin")), sha256(data));
    assert.ok(await objectExists(s3, bucket, "down/two.bin"));
  });

  it("--recursive: no object is reported moved, and every source stays", async () => {
    await putTestObject(s3, bucket, "many/a.bin", Buffer.from("a"));
    await putTestObject(s3, bucket, "many/b.bin", Buffer.from("b"));
    const res = await s3x(["mv", `s3://${bucket}/many/`, `s3://${bucket}/many-to/`, "--recursive"]);
    assert.equal(res.code, 1, res.stderr);
    assert.deepEqual(lines(res), []);
    assert.match(res.stderr, /AccessDenied/);
    assert.ok(await objectExists(s3, bucket, "many/a.bin"));
    assert.ok(await objectExists(s3, bucket, "many/b.bin"));
  });
});
