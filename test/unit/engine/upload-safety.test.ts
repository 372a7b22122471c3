import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PartReceipts } from "../../../src/engine/part-receipts.js";
import { multipartEtag } from "../../../src/engine/multipart-commit.js";
import { destinationPrefix, recordMatchesRequest, uploadsDirectory, type UploadRecord } from "../../../src/engine/resume/upload-journal.js";
import { DestinationBusyError } from "../../../src/engine/locks/exclusive-lock.js";
import { lockDestination } from "../../../src/engine/resume/upload-lock.js";
import { ChecksumSupport } from "../../../src/engine/integrity/checksum-support.js";

const md5 = (data: string): string => createHash("md5").update(data).digest("hex");

describe("engine: upload safety bookkeeping", () => {
  describe("PartReceipts (hedged part ETags)", () => {
    it("completes a part with the ETag of the copy S3 acknowledged last", () => {
      const receipts = new PartReceipts();
      const original = receipts.sent(3);
      const duplicate = receipts.sent(3);
      duplicate('"kms-etag-duplicate"');
      original('"kms-etag-original"');
      assert.equal(receipts.etagOf(3), '"kms-etag-original"');
      assert.deepEqual(receipts.uncertain(), [], "both copies answered: the last answer is what S3 keeps");
    });

    it("a raced part whose other copy was cut off unanswered is uncertain (ListParts decides)", () => {
      const receipts = new PartReceipts();
      const original = receipts.sent(2);
      const duplicate = receipts.sent(2);
      duplicate('"dup"');
      original(); // cancelled: S3 may still have stored it, after the duplicate
      assert.equal(receipts.etagOf(2), '"dup"');
      assert.deepEqual(receipts.uncertain(), [2]);
    });

    it("a plain retry after a failure is not a race; a settled copy cannot report twice", () => {
      const receipts = new PartReceipts();
      const first = receipts.sent(1);
      first();
      const retry = receipts.sent(1);
      retry('"good"');
      retry('"late-echo"');
      assert.equal(receipts.etagOf(1), '"good"');
      assert.deepEqual(receipts.uncertain(), []);
      receipts.stored(4, '"reused"');
      assert.equal(receipts.etagOf(4), '"reused"');
    });
  });

  it("multipartEtag: MD5 of the binary part MD5s, -N, in part order; undefined when a part ETag is not an MD5", () => {
    const parts = [
      { partNumber: 2, etag: `"${md5("b")}"` },
      { partNumber: 1, etag: md5("a") },
    ];
    const expected = createHash("md5").update(Buffer.concat([Buffer.from(md5("a"), "hex"), Buffer.from(md5("b"), "hex")])).digest("hex") + "-2";
    assert.equal(multipartEtag(parts), expected);
    assert.equal(multipartEtag([{ partNumber: 1, etag: '"not-an-md5"' }]), undefined);
  });

  it("an upload is continued only by a command asking for the same attributes and checksum", () => {
    const record: UploadRecord = {
      version: 1,
      endpoint: "e",
      bucket: "b",
      key: "k",
      uploadId: "u",
      source: { path: "/f", size: 1, mtimeMs: 1 },
      partSize: 5,
      checksum: "CRC32C",
      attributes: { contentType: "text/plain", metadata: { a: "1", b: "2" } },
      started: "2026-11-25T00:00:00.000Z",
    };
    assert.ok(recordMatchesRequest(record, { attributes: { contentType: "text/plain", metadata: { b: "2", a: "1" } }, checksum: "CRC32C" }));
    assert.ok(!recordMatchesRequest(record, { attributes: { contentType: "text/html", metadata: { a: "1", b: "2" } }, checksum: "CRC32C" }));
    assert.ok(!recordMatchesRequest(record, { attributes: { contentType: "text/plain", metadata: { a: "1" } }, checksum: "CRC32C" }));
    assert.ok(!recordMatchesRequest(record, { attributes: { contentType: "text/plain", metadata: { a: "1", b: "2" }, storageClass: "STANDARD_IA" }, checksum: "CRC32C" }));
    assert.ok(!recordMatchesRequest(record, { attributes: { contentType: "text/plain", metadata: { a: "1", b: "2" } } }));
    assert.ok(!recordMatchesRequest({ ...record, attributes: undefined }, { attributes: {}, checksum: "CRC32C" }), "a record without attributes (older s3x) is never continued");
    assert.ok(recordMatchesRequest({ ...record, checksum: undefined }, { attributes: { contentType: "text/plain", metadata: { a: "1", b: "2" } }, checksum: "any" }), "a default checksum matches an upload created without one");
    assert.ok(!recordMatchesRequest(record, { attributes: { contentType: "text/html", metadata: { a: "1", b: "2" } }, checksum: "any" }), "the attributes still count");
  });

  it("ChecksumSupport: one probe at a time; its answer decides for the waiting parts; a probe without answer hands over", async () => {
    const support = new ChecksumSupport();
    assert.equal(await support.turn(), "probe");
    const waiting = support.turn();
    support.learn({ algorithm: "CRC32C", base64: "x" }, "no answer");
    assert.equal(await waiting, "probe", "the next part probes when the first got no answer");
    const after = support.turn();
    support.learn({ algorithm: "CRC32C", base64: "x" }, undefined);
    assert.equal(await after, "ignored");
    const checked = new ChecksumSupport();
    await checked.turn();
    checked.learn({ algorithm: "SHA256", base64: "y" }, { algorithm: "SHA256", base64: "y" });
    assert.equal(await checked.turn(), "checked");
  });

  describe("destination lock", () => {
    let state: string;
    let saved: string | undefined;
    before(async () => {
      state = await mkdtemp(join(tmpdir(), "s3x-lock-"));
      saved = process.env.S3X_STATE_DIR;
      process.env.S3X_STATE_DIR = state;
    });
    after(async () => {
      if (saved === undefined) delete process.env.S3X_STATE_DIR;
      else process.env.S3X_STATE_DIR = saved;
      await rm(state, { recursive: true, force: true });
    });

    it("refuses a second holder while the first lives, and is free again once released", async () => {
      const ref = { bucket: "b", key: "k" };
      const lock = await lockDestination("e", ref);
      await assert.rejects(lockDestination("e", ref), (err: unknown) => err instanceof DestinationBusyError && err.pid === process.pid);
      const other = await lockDestination("e", { bucket: "b", key: "other" });
      await other.release();
      await lock.release();
      await (await lockDestination("e", ref)).release();
    });

    it("takes over the lock of a process that is gone", async () => {
      const ref = { bucket: "b", key: "dead" };
      // A child takes the lock and exits without releasing it (kill -9's leftover).
      const script = `import(${JSON.stringify(new URL("../../../src/engine/resume/upload-lock.js", import.meta.url).href)}).then((m) => m.lockDestination("e", ${JSON.stringify(ref)}))`;
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ["-e", script], { env: process.env, stdio: "inherit" });
        child.on("error", reject);
        child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
      });
      const lock = await lockDestination("e", ref);
      await lock.release();
    });

    it("is the one lock mechanism of downloads too: another host's lock is refused in one line naming it; an earlier release's bare-pid lock of a dead process is taken over", async () => {
      const ref = { bucket: "b", key: "shared" };
      const path = join(uploadsDirectory(), `${destinationPrefix("e", ref)}.lock`);
      await writeFile(path, JSON.stringify({ pid: 4242, host: "rank-7.example", command: "s3x", started: "2026-01-01T00:00:00.000Z" }) + "\n");
      await assert.rejects(lockDestination("e", ref), (err: unknown) => {
        assert.ok(err instanceof DestinationBusyError && err.pid === 4242, String(err));
        assert.equal(err.message, `another s3x (pid 4242 on host rank-7.example) is uploading to this key right now; remove ${path} if that process is gone`);
        return true;
      });
      const dead = await new Promise<number>((resolve, reject) => {
        const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
        child.on("error", reject);
        child.on("exit", () => resolve(child.pid!));
      });
      await writeFile(path, `${dead}\n`);
      const lock = await lockDestination("e", ref);
      assert.equal((JSON.parse(await readFile(path, "utf8")) as { pid: number }).pid, process.pid);
      await lock.release();
    });
  });
});
