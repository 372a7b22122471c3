/**
 * The README's first command: starts a local S3 server (Ceph radosgw with
 * its in-memory store), then runs s3x for real — a 256 MiB upload and
 * download with the progress bar — and checks the bytes came back intact.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { ensureRadosgwInstalled, startRadosgw } from "../test/support/radosgw.js";

const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "s3x.js");

async function main(): Promise<void> {
  // The SDK's "future releases need Node 22" notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  ensureRadosgwInstalled((l) => console.error(`[radosgw] ${l}`));
  console.error("starting a local S3 server (radosgw, memstore)…");
  const server = await startRadosgw();
  const dir = await mkdtemp(join(tmpdir(), "s3x-quickstart-"));
  try {
    const client = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });
    await client.send(new CreateBucketCommand({ Bucket: "quickstart" }));
    client.destroy();
    const data = randomBytes(256 * 1024 * 1024);
    await writeFile(join(dir, "sample.bin"), data);
    const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey, AWS_ENDPOINT_URL: server.endpoint };
    const s3x = (...args: string[]): void => {
      console.error(`$ s3x ${args.join(" ")}`);
      const res = spawnSync(process.execPath, [BIN, ...args], { env, stdio: "inherit" });
      if (res.status !== 0) throw new Error(`s3x exited with ${res.status}`);
    };
    s3x("cp", join(dir, "sample.bin"), "s3://quickstart/sample.bin");
    s3x("cp", "s3://quickstart/sample.bin", join(dir, "back.bin"));
    const same = createHash("sha256").update(await readFile(join(dir, "back.bin"))).digest("hex") === createHash("sha256").update(data).digest("hex");
    console.error(same ? "round trip verified: 256 MiB identical (sha256)" : "MISMATCH: downloaded bytes differ");
    if (!same) process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
