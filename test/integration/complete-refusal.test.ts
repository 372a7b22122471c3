import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { assertExitedPromptly, randomFile, runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, objectHash, openUploads, testS3, type TestS3 } from "../support/s3-server.js";
import { startCompleteRefusingProxy, type CompleteRefusingProxy } from "../support/complete-refusing-proxy.js";

const MiB = 1024 * 1024;

function stats(res: RunResult): Record<string, number> {
  return JSON.parse(res.stdout.toString().trim().split("\n").pop() ?? "") as Record<string, number>;
}

/**
 * CompleteMultipartUpload refused or failed, through the real CLI against
 * radosgw (which ignores x-amz-checksum-*, as Swift does) behind a fake that
 * answers Complete as such servers do (test/support/complete-refusing-proxy.ts).
 */
describe("CompleteMultipartUpload refused or failed (integration, real radosgw + fake Complete answers)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let proxy: CompleteRefusingProxy;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "complete");
    dir = await mkdtemp(join(tmpdir(), "s3x-complete-"));
    env = { ...s3.env, S3X_STATE_DIR: join(dir, "state") };
    proxy = await startCompleteRefusingProxy(s3.host, s3.port);
  });

  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const via = (args: string[]): string[] => [...args, "--endpoint-url", proxy.endpoint, "--part-size", "5MiB"];
  const records = async () => (await readdir(join(dir, "state", "uploads")).catch(() => [] as string[])).filter((name) => name.endsWith(".json"));
  const uploadsOf = async (key: string) =>
    ((await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))).Uploads ?? []).filter((u) => u.Key === key);

  /** Runs an upload and SIGKILLs it once the proxy holds its Complete (mode "hold" or "complete-then-hold"). */
  async function killDuringComplete(args: string[]): Promise<void> {
    const res = await runS3x(via(args), {
      env,
      onSpawn: (child: ChildProcess) => {
        child.stdin!.end();
        void proxy.held().then(() => child.kill("SIGKILL"));
      },
    });
    assert.equal(res.signal, "SIGKILL", `expected a kill during Complete; the run ended first: ${res.stderr}`);
  }

  it("resumed with every part stored, Complete refused for its checksum elements (MalformedXML): retried once without them, the object is whole", async () => {
    const src = join(dir, "all-stored.bin");
    const hash = await randomFile(src, 12 * MiB);
    const dest = `s3://${bucket}/all-stored.bin`;
    proxy.mode = "hold";
    await killDuringComplete(["cp", src, dest]);
    assert.equal((await uploadsOf("all-stored.bin")).length, 1, "the killed upload is open");

    proxy.mode = "refuse-checksums";
    const parts = proxy.uploadParts;
    const completes = proxy.completes.length;
    const res = await runS3x(via(["cp", src, dest, "--resume", "--json"]), { env });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(proxy.uploadParts - parts, 0, "every part was stored: none sent again");
    assert.deepEqual(proxy.completes.slice(completes).map((c) => c.withChecksums), [true, false], "Complete with checksums, then once without");
    assert.equal(stats(res).reusedParts, 3);
    assert.equal(await objectHash(s3, bucket, "all-stored.bin"), hash);
    assert.deepEqual(await uploadsOf("all-stored.bin"), []);
    assert.deepEqual(await records(), [], "the local record is gone");
  });

  it("Complete failing for good after every part is stored: the upload is kept with its record, the message says how to resume or discard it, exit 1", async () => {
    const src = join(dir, "kept.bin");
    const hash = await randomFile(src, 12 * MiB);
    const dest = `s3://${bucket}/kept.bin`;
    proxy.mode = "refuse-all";
    const res = await runS3x(via(["cp", src, dest]), { env });
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.match(res.stderr, /MalformedXML/);
    assert.match(res.stderr, /kept the upload of s3:\/\/\S+\/kept\.bin \(upload ID \S+, all 3 parts stored\): run the same command with --resume to complete it, or s3x rm --uploads s3:\/\/\S+\/kept\.bin to discard it/);
    assert.equal((await uploadsOf("kept.bin")).length, 1, "the upload and its parts are kept");
    assert.equal((await records()).length, 1, "with its local record");

    proxy.mode = "relay";
    const parts = proxy.uploadParts;
    const resumed = await runS3x(via(["cp", src, dest, "--resume"]), { env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(proxy.uploadParts - parts, 0, "the kept parts completed the object");
    assert.equal(await objectHash(s3, bucket, "kept.bin"), hash);
    assert.deepEqual(await uploadsOf("kept.bin"), []);
  });

  it("a stale record of an upload the server completed (killed before the answer): --resume ends in success when the object's ETag is the file's, sending nothing", async () => {
    const src = join(dir, "stale.bin");
    const hash = await randomFile(src, 12 * MiB);
    const dest = `s3://${bucket}/stale.bin`;
    const before = (await records()).length;
    proxy.mode = "complete-then-hold";
    await killDuringComplete(["cp", src, dest]);
    assert.equal(await objectHash(s3, bucket, "stale.bin"), hash, "the server completed the upload");
    assert.equal((await records()).length, before + 1, "the record outlived the kill");

    proxy.mode = "refuse-checksums";
    const parts = proxy.uploadParts;
    const completes = proxy.completes.length;
    const res = await runS3x(via(["cp", src, dest, "--resume", "--json"]), { env });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /upload \S+ of s3:\/\/\S+\/stale\.bin was completed before the interruption/);
    assert.equal(proxy.uploadParts - parts, 0, "no part sent");
    assert.equal(proxy.completes.length - completes, 0, "no Complete sent");
    assert.equal(stats(res).bytesSent, 0);
    assert.equal(await objectHash(s3, bucket, "stale.bin"), hash);
    assert.equal((await records()).length, before, "the stale record is gone");
  });

  it("Complete answered 200 with an <Error> (InvalidPart): one attempt, the message names InvalidPart and its message", async () => {
    const src = join(dir, "invalid-part.bin");
    await randomFile(src, 12 * MiB);
    proxy.mode = "error-in-200";
    const completes = proxy.completes.length;
    const res = await runS3x(via(["cp", src, `s3://${bucket}/invalid-part.bin`]), { env });
    assert.equal(res.code, 1, res.stderr);
    assertExitedPromptly(res);
    assert.equal(proxy.completes.length - completes, 1, "InvalidPart is not retried");
    assert.match(res.stderr, /CompleteMultipartUpload s3:\/\/\S+\/invalid-part\.bin: InvalidPart: One or more of the specified parts could not be found\./);
    assert.doesNotMatch(res.stderr, /HTTP 503|after \d+ attempts/);
    proxy.mode = "relay";
    const clean = await runS3x(["rm", `s3://${bucket}/invalid-part.bin`, "--uploads", "--endpoint-url", proxy.endpoint], { env });
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal(await openUploads(s3, bucket), 0);
  });
});
