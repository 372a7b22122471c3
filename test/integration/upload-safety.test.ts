import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { randomFile, runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, objectHash, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { interruptAfterOnePart, startDropResponseProxy, type DropResponseProxy } from "../support/drop-response-proxy.js";

const MiB = 1024 * 1024;

function stats(res: RunResult): Record<string, number> {
  return JSON.parse(res.stdout.toString().trim().split("\n").pop() ?? "") as Record<string, number>;
}

/**
 * Uploads never misreport or leak (issue #21): lost answers to Create and
 * Complete, --resume and attributes, other clients' uploads, checksums a
 * server ignores, concurrent runs to one key. Every run goes through a
 * drop-response proxy (a named fake: it loses one answer on request, and
 * counts requests) in front of the real radosgw.
 */
describe("upload safety (integration, real radosgw)", function () {
  this.timeout(300_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let proxy: DropResponseProxy;

  before(async function () {
    s3 = await testS3();
    bucket = await freshBucket(s3, "safety");
    dir = await mkdtemp(join(tmpdir(), "s3x-safety-"));
    env = { ...s3.env, S3X_STATE_DIR: join(dir, "state") };
    proxy = await startDropResponseProxy(s3.host, s3.port);
  });

  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const viaProxy = (args: string[]): string[] => [...args, "--endpoint-url", proxy.endpoint];
  const uploadsOf = async (key: string): Promise<string[]> => {
    const out = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
    return (out.Uploads ?? []).filter((u) => u.Key === key).map((u) => u.UploadId ?? "");
  };

  it("a lost CompleteMultipartUpload answer, the retry answered NoSuchUpload: the object is checked (HEAD, multipart ETag) and accepted, exit 0", async () => {
    const src = join(dir, "complete.bin");
    const hash = await randomFile(src, 12 * MiB);
    proxy.dropNext("CompleteMultipartUpload", 1, { thenNoSuchUpload: true });
    const before = proxy.dropped;
    const res = await runS3x(viaProxy(["cp", src, `s3://${bucket}/complete.bin`, "--part-size", "5MiB"]), { env });
    assert.equal(proxy.dropped, before + 1, "the proxy lost one Complete answer");
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await objectHash(s3, bucket, "complete.bin"), hash);
    assert.deepEqual(await uploadsOf("complete.bin"), []);
  });

  it("a lost Complete answer, and the object replaced before the retry: fails clearly, exit 1", async () => {
    const src = join(dir, "replaced.bin");
    await randomFile(src, 12 * MiB);
    // Another writer replaces the object between the lost Complete and its retry.
    proxy.dropNext("CompleteMultipartUpload", 1, { thenNoSuchUpload: true, beforeNoSuchUpload: () => putTestObject(s3, bucket, "replaced.bin", Buffer.from("another writer")) });
    const res = await runS3x(viaProxy(["cp", src, `s3://${bucket}/replaced.bin`, "--part-size", "5MiB"]), { env });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /^s3x: upload failed: \S+ to s3:\/\/\S+\/replaced\.bin: CompleteMultipartUpload \S+: the answer to a first attempt was lost and the upload is gone, and the object there \(ETag \S+\) is not the one these parts make \(\S+-3\): another writer may have replaced it\n$/);
    assert.deepEqual(await uploadsOf("replaced.bin"), []);
  });

  it("a lost CreateMultipartUpload answer: the upload it made is aborted, none is left behind", async () => {
    const src = join(dir, "create.bin");
    const hash = await randomFile(src, 12 * MiB);
    proxy.dropNext("CreateMultipartUpload");
    const before = proxy.dropped;
    const res = await runS3x(viaProxy(["cp", src, `s3://${bucket}/create.bin`, "--part-size", "5MiB"]), { env });
    assert.equal(proxy.dropped, before + 1, "the proxy lost one Create answer");
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await objectHash(s3, bucket, "create.bin"), hash);
    assert.deepEqual(await uploadsOf("create.bin"), [], "no orphaned upload");
  });

  /** Starts an upload through the proxy, lets one part land, holds the rest and kills s3x -9 there. */
  async function interrupt(args: string[]): Promise<void> {
    await interruptAfterOnePart(proxy, (onSpawn) => runS3x(viaProxy(args), { env, onSpawn }));
  }


  it("--resume with other --content-type/--metadata starts a new upload with them; with the same ones it resumes and keeps them", async () => {
    const src = join(dir, "attrs.bin");
    const hash = await randomFile(src, 15 * MiB);
    const first = ["--content-type", "text/first", "--metadata", "origin=first", "--part-size", "5MiB"];
    const second = ["--content-type", "application/second", "--metadata", "origin=second", "--part-size", "5MiB"];

    await interrupt(["cp", src, `s3://${bucket}/attrs/changed.bin`, ...first]);
    const changed = await runS3x(viaProxy(["cp", src, `s3://${bucket}/attrs/changed.bin`, "--resume", "--json", ...second]), { env });
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stderr, /was started with other attributes .*: aborting it and starting a new upload with the ones given now/);
    assert.equal(stats(changed).reusedParts, 0);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "attrs/changed.bin" }));
    assert.equal(head.ContentType, "application/second");
    assert.equal(head.Metadata?.origin, "second");
    assert.equal(await objectHash(s3, bucket, "attrs/changed.bin"), hash);
    assert.deepEqual(await uploadsOf("attrs/changed.bin"), [], "the first upload was aborted");

    await interrupt(["cp", src, `s3://${bucket}/attrs/same.bin`, ...first]);
    const same = await runS3x(viaProxy(["cp", src, `s3://${bucket}/attrs/same.bin`, "--resume", "--json", ...first]), { env });
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stderr, /resuming upload \S+ of s3:\/\/\S+\/attrs\/same\.bin/);
    assert.ok(stats(same).reusedParts >= 1, `${same.stderr}\n${same.stdout.toString()}`);
    const kept = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "attrs/same.bin" }));
    assert.equal(kept.ContentType, "text/first");
    assert.equal(kept.Metadata?.origin, "first");
    assert.equal(await objectHash(s3, bucket, "attrs/same.bin"), hash);
  });

  it("--resume never adopts an upload of the same key that another client started", async () => {
    const src = join(dir, "foreign.bin");
    const hash = await randomFile(src, 12 * MiB);
    const key = "foreign.bin";
    // Another client (the SDK) starts an upload of the same key, with the file's first 5 MiB as part 1.
    const created = await s3.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: "x-other/client", Metadata: { owner: "other" } }));
    const body = (await readFile(src)).subarray(0, 5 * MiB);
    await s3.client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: created.UploadId, PartNumber: 1, Body: body, ContentLength: body.length }));

    const res = await runS3x(viaProxy(["cp", src, `s3://${bucket}/${key}`, "--resume", "--part-size", "5MiB", "--content-type", "application/mine"]), { env });
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stderr, /resuming upload/);
    assert.equal(await objectHash(s3, bucket, key), hash);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    assert.equal(head.ContentType, "application/mine");
    assert.equal(head.Metadata?.owner, undefined);
    assert.deepEqual(await uploadsOf(key), [created.UploadId], "the other client's upload is untouched");
    await s3.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: created.UploadId }));
  });

  it("--checksum-algorithm against a server that does not check it stops after the first part, aborted, nothing left", async () => {
    const src = join(dir, "crc.bin");
    await randomFile(src, 20 * MiB);
    const parts = proxy.counts.UploadPart;
    const res = await runS3x(viaProxy(["cp", src, `s3://${bucket}/crc.bin`, "--part-size", "5MiB", "--checksum-algorithm", "CRC32C"]), { env });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /^s3x: upload failed: \S+ to s3:\/\/\S+\/crc\.bin: the server did not confirm the CRC32C checksum of the first part .*stopped before sending the rest[^\n]*\n$/);
    assert.equal(proxy.counts.UploadPart - parts, 1, "one UploadPart only");
    assert.deepEqual(await uploadsOf("crc.bin"), [], "the upload was aborted");
  });

  it("--checksum-algorithm on a single PUT to a server that does not check it is an error too (exit 1), the object stored whole; later files are not sent", async () => {
    const src = join(dir, "small.bin");
    const hash = await randomFile(src, 1 * MiB);
    const res = await runS3x(viaProxy(["cp", src, `s3://${bucket}/small.bin`, "--checksum-algorithm", "CRC32C"]), { env });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /^s3x: upload failed: \S+ to s3:\/\/\S+\/small\.bin: the server did not confirm the CRC32C checksum of s3:\/\/\S+\/small\.bin \(it does not check x-amz-checksum-\*\): the object is stored, unverified by it \(run with --checksum-algorithm none to upload without it\)\n$/);
    assert.equal(await objectHash(s3, bucket, "small.bin"), hash);
    const json = await runS3x(viaProxy(["cp", src, `s3://${bucket}/small.bin`, "--checksum-algorithm", "CRC32C", "--json"]), { env });
    assert.equal(json.code, 1, json.stderr);
    assert.equal(stats(json).unconfirmedChecksums, 1);

    const tree = join(dir, "small-tree");
    await mkdir(tree);
    for (const name of ["a.bin", "b.bin", "c.bin"]) await randomFile(join(tree, name), 1000);
    const puts = proxy.counts.PutObject;
    const many = await runS3x(viaProxy(["cp", tree, `s3://${bucket}/small-tree/`, "--recursive", "--concurrency", "1", "--checksum-algorithm", "CRC32C"]), { env });
    assert.equal(many.code, 1, many.stderr);
    assert.equal(proxy.counts.PutObject - puts, 1, "once the server showed it ignores the checksum, the other files are refused before sending");
    assert.equal((many.stderr.match(/did not confirm the CRC32C checksum/g) ?? []).length, 3, many.stderr);
  });

  it("20 pairs of concurrent --resume uploads of two files to one key: always one whole file, each run succeeds or is refused, nothing left behind", async () => {
    const a = join(dir, "pair-a.bin");
    const b = join(dir, "pair-b.bin");
    const hashes = new Set([await randomFile(a, 12 * MiB), await randomFile(b, 12 * MiB)]);
    const key = "pair.bin";
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      const runs = await Promise.all(
        [a, b].map((src) => runS3x(viaProxy(["cp", src, `s3://${bucket}/${key}`, "--resume", "--part-size", "5MiB"]), { env })),
      );
      for (const run of runs) {
        if (run.code === 0) continue;
        refused++;
        assert.match(run.stderr, /^s3x: upload failed: \S+ to s3:\/\/\S+\/pair\.bin: another s3x \(pid \d+\) is uploading to this key right now; run this again once it has finished\n$/, `pair ${i}: ${run.stderr}`);
      }
      assert.ok(runs.some((r) => r.code === 0), `pair ${i}: one run succeeded`);
      assert.ok(hashes.has(await objectHash(s3, bucket, key)), `pair ${i}: the object is one whole file`);
      assert.deepEqual(await uploadsOf(key), [], `pair ${i}: no upload left`);
    }
    assert.deepEqual((await readdir(join(dir, "state", "uploads"))).filter((f) => f.endsWith(".lock")), [], "no lock left");
    process.stderr.write(`      (${refused} of 40 runs refused while the other held the key)\n`);
  });
});
