import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  findUploadRecords,
  forgetUpload,
  recordMatchesSource,
  removeUploadRecord,
  saveUploadRecord,
  type UploadRecord,
} from "../../../src/engine/resume/upload-journal.js";
import { partMatches } from "../../../src/engine/resume/upload-resume.js";

function record(overrides: Partial<UploadRecord> = {}): UploadRecord {
  return {
    version: 1,
    endpoint: "http://127.0.0.1:9000",
    bucket: "b",
    key: "k",
    uploadId: "u1",
    source: { path: "/data/f", size: 100, mtimeMs: 1234.5 },
    partSize: 5 * 1024 * 1024,
    started: "2026-11-22T00:00:00.000Z",
    ...overrides,
  };
}

describe("engine/resume: upload records and part checks", () => {
  let state: string;
  let saved: string | undefined;
  before(async () => {
    state = await mkdtemp(join(tmpdir(), "s3x-state-"));
    saved = process.env.S3X_STATE_DIR;
    process.env.S3X_STATE_DIR = state;
  });
  after(async () => {
    if (saved === undefined) delete process.env.S3X_STATE_DIR;
    else process.env.S3X_STATE_DIR = saved;
    await rm(state, { recursive: true, force: true });
  });

  it("finds the records of one destination, newest first, and not those of others", async () => {
    const older = await saveUploadRecord(record({ uploadId: "old", started: "2026-11-21T00:00:00.000Z" }));
    await saveUploadRecord(record({ uploadId: "new", started: "2026-11-22T00:00:00.000Z" }));
    await saveUploadRecord(record({ uploadId: "other-key", key: "k2" }));
    await saveUploadRecord(record({ uploadId: "other-endpoint", endpoint: "aws" }));
    const found = await findUploadRecords("http://127.0.0.1:9000", { bucket: "b", key: "k" });
    assert.deepEqual(found.map((f) => f.record.uploadId), ["new", "old"]);
    await removeUploadRecord(older);
    await forgetUpload("new");
    assert.deepEqual(await findUploadRecords("http://127.0.0.1:9000", { bucket: "b", key: "k" }), []);
    assert.equal((await readdir(join(state, "uploads"))).length, 2);
  });

  it("a record matches the same file only: same path, size and mtime", () => {
    const r = record();
    assert.equal(recordMatchesSource(r, { path: "/data/f", size: 100, mtimeMs: 1234.5 }), true);
    assert.equal(recordMatchesSource(r, { path: "/data/f", size: 101, mtimeMs: 1234.5 }), false);
    assert.equal(recordMatchesSource(r, { path: "/data/f", size: 100, mtimeMs: 9999 }), false);
    assert.equal(recordMatchesSource(r, { path: "/data/g", size: 100, mtimeMs: 1234.5 }), false);
  });

  it("a stored part is reused only when its bytes match: checksum of our algorithm, else MD5 ETag", () => {
    const body = Buffer.from("part bytes");
    const md5 = createHash("md5").update(body).digest("hex");
    assert.equal(partMatches({ partNumber: 1, size: body.length, etag: `"${md5}"` }, body, undefined), true);
    assert.equal(partMatches({ partNumber: 1, size: body.length, etag: `"${md5}"` }, Buffer.from("part bytez"), undefined), false);
    assert.equal(partMatches({ partNumber: 1, size: 3, etag: `"${md5}"` }, body, undefined), false, "size differs");
    assert.equal(partMatches({ partNumber: 1, size: body.length, etag: '"not-an-md5"' }, body, undefined), false, "unverifiable: send again");
    const crc = { algorithm: "CRC32C" as const, base64: "AAAAAA==" };
    assert.equal(partMatches({ partNumber: 1, size: body.length, etag: '"x"', checksum: crc }, body, crc), true);
    assert.equal(partMatches({ partNumber: 1, size: body.length, etag: `"${md5}"`, checksum: crc }, body, { ...crc, base64: "AQAAAA==" }), false);
  });
});
