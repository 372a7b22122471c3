import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { S3X_BIN } from "../support/cli.js";
import { slowReaderScript } from "../support/slow-reader.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const MiB = 1024 * 1024;

/**
 * A slow reader slows the downloads; it never grows memory. 1 GiB under a
 * prefix is streamed by `s3x cat` into a reader that takes the first 256 MiB
 * at 10 MB/s and the rest as fast as it can; s3x's peak RSS must stay within
 * --max-memory + 150 MiB, and the bytes must arrive whole and in order.
 * (A reader at 10 MB/s for the whole GiB, and the figures, are in
 * `npm run bench:stream`: here the slow stretch is long enough to fill
 * every buffer the window allows many times over.)
 */
describe("cat with a slow reader: bounded memory (integration, real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  const whole = createHash("sha256");

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "catmem");
    for (let i = 0; i < 16; i++) {
      const body = randomBytes(64 * MiB);
      whole.update(body);
      await putTestObject(s3, bucket, `big/${String(i).padStart(2, "0")}.bin`, body);
    }
  });

  it("keeps peak RSS within --max-memory + 150 MiB while the reader is slow", async function () {
    this.timeout(600_000);
    const maxMemory = 128 * MiB;
    const reader = slowReaderScript(10, 256 * MiB);
    const script = `node "${S3X_BIN}" cat "s3://${bucket}/big/" --json --max-memory 128MiB --endpoint-url ${s3.endpoint} 2>"$ERR" | python3 -c '${reader}'; echo "status=\${PIPESTATUS[0]}"`;
    const errFile = `/tmp/s3x-catmem-${process.pid}.err`;
    const out = await new Promise<string>((resolve) => {
      const sh = spawn("bash", ["-c", script], { env: { ...s3.env, ERR: errFile } });
      let text = "";
      sh.stdout.on("data", (c: Buffer) => (text += c));
      sh.on("close", () => resolve(text));
    });
    const err = await readFile(errFile, "utf8");
    await rm(errFile, { force: true });
    assert.match(out, /status=0\n$/, err);
    assert.equal(out.split("\n")[0], `${1024 * MiB} ${whole.digest("hex")}`);
    const summary = JSON.parse(err.trim().split("\n").at(-1)!) as { peakRssBytes: number; peakBufferBytes: number; transferred: number };
    assert.equal(summary.transferred, 16);
    assert.ok(summary.peakBufferBytes <= maxMemory, `buffers peaked at ${summary.peakBufferBytes} bytes`);
    assert.ok(summary.peakRssBytes <= maxMemory + 150 * MiB, `peak RSS ${(summary.peakRssBytes / MiB).toFixed(0)} MiB`);
  });
});
