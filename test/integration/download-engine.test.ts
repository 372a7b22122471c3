import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContext } from "../../src/engine/context.js";
import { downloadObject } from "../../src/engine/download.js";
import { DEFAULT_RETRY_POLICY } from "../../src/engine/retry.js";
import { FileSink } from "../../src/engine/sinks/file-sink.js";
import { DEFAULT_NET_OPTIONS } from "../../src/net/pools.js";
import { connect, type S3Connection } from "../../src/s3/client.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The download engine against the real server, for what the CLI cannot
 * stage on demand: an object that changed size between the listing that
 * sized its buffer and the GET.
 */
describe("engine/download (integration, radosgw): objects listed with one size, fetched with another", function () {
  this.timeout(120_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let conn: S3Connection;
  const savedEnv = { ...process.env };

  before(async () => {
    s3 = await testS3();
    bucket = await freshBucket(s3, "grew");
    dir = await mkdtemp(join(tmpdir(), "s3x-grew-"));
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_REGION: s3.region });
    conn = connect({ endpointUrl: s3.endpoint, noSignRequest: false, net: DEFAULT_NET_OPTIONS });
  });

  after(async () => {
    await conn?.close();
    process.env = savedEnv;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function download(key: string, sizeHint: number): Promise<{ bytes: Buffer; requests: number }> {
    const ctx = createContext({ s3: conn.s3, concurrency: 4, maxMemory: 64 * MiB, retry: DEFAULT_RETRY_POLICY, signal: new AbortController().signal });
    const path = join(dir, key);
    await downloadObject(ctx, { bucket, key }, new FileSink(path), 8 * MiB, sizeHint);
    return { bytes: await readFile(path), requests: ctx.stats.requests };
  }

  it("asks for a small listed object whole, in one request", async () => {
    const data = randomBytes(64 * KiB);
    await putTestObject(s3, bucket, "exact", data);
    // Twice: the first GET of a bucket goes through the SDK, the next ones direct (s3/request.ts).
    for (let i = 0; i < 2; i++) {
      const got = await download("exact", data.length);
      assert.ok(got.bytes.equals(data));
      assert.equal(got.requests, 1);
    }
  });

  it("fetches an object that grew past its listed size in full, with a second request, and leaves no temporary file", async () => {
    for (const [key, size] of [["grew-small", 300 * KiB], ["grew-multipart", 9 * MiB + 77]] as const) {
      const data = randomBytes(size);
      await putTestObject(s3, bucket, key, data);
      for (let i = 0; i < 2; i++) {
        const got = await download(key, 100 * KiB);
        assert.ok(got.bytes.equals(data), `${key}: every byte`);
        assert.ok(got.requests >= 2, `${key}: the whole GET was refused before its body, then fetched in ranges`);
      }
    }
    assert.deepEqual((await readdir(dir)).filter((name) => name.includes(".s3x-part")), []);
  });

  it("fetches an object that shrank since it was listed", async () => {
    const data = randomBytes(10 * KiB);
    await putTestObject(s3, bucket, "shrank", data);
    const got = await download("shrank", 100 * KiB);
    assert.ok(got.bytes.equals(data));
    assert.equal(got.requests, 1);
  });
});
