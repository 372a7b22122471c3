/**
 * The objects `npm run bench:cores` (bench/cores.ts) reads and the file its
 * uploads send, with the SHA-256 their bytes must have. On the Go benchmark
 * server a large object needs no upload (`obj-<bytes>` exists in every bucket,
 * `s3srv -sha256` prints its hash); uploads keep only their size, and reading
 * one back gives the server's pattern, so the small files are that pattern too.
 * On another endpoint every object is uploaded first, with s3x, untimed.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import { join } from "node:path";
import { DeleteObjectCommand, HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { S3X_BIN, writeRandomFile } from "./common.js";
import type { CoresEndpoint } from "./cores-server.js";

export const WORKLOADS = ["download", "stdout", "upload", "small"] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface BenchObjects {
  /** The large object every download reads. */
  bigKey: string;
  bigSha: string;
  /** The file every upload sends (size bytes, on tmpfs when there is one). */
  uploadFile: string;
  /** Where the small objects are ("…/"); each has the bytes whose hash is smallSha. */
  smallPrefix: string;
  smallSha: string;
}

/** The Go server's virtual object of `size` bytes, which downloads read. */
export const virtualKey = (size: number): string => `cores/obj-${size}`;

function s3x(args: string[], env: NodeJS.ProcessEnv): void {
  const r = spawnSync(process.execPath, [S3X_BIN, ...args], { env, encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`s3x ${args.join(" ")} failed: ${r.stderr.trim().split("\n").slice(-3).join(" / ")}`);
}

/** Runs the Go server's binary (-sha256, -write), which exits at once. */
function s3srv(binary: string, args: string[]): string {
  const r = spawnSync(binary, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${binary} ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout;
}

export async function prepareObjects(
  ep: CoresEndpoint,
  env: NodeJS.ProcessEnv,
  scratch: string,
  o: { size: number; smallCount: number; smallSize: number; small: boolean; log: (line: string) => void },
): Promise<BenchObjects> {
  const uploadFile = join(scratch, "upload.bin");
  const smallPrefix = "cores/small/";
  const flags = ["--endpoint-url", ep.url, "--no-progress", "--only-show-errors"];
  let bigKey: string;
  let bigSha: string;
  let smallBytes: Buffer;
  if (ep.virtualServer) {
    bigKey = virtualKey(o.size);
    bigSha = s3srv(ep.virtualServer, ["-sha256", `obj-${o.size}`]).split(" ")[0]!;
    s3srv(ep.virtualServer, ["-write", uploadFile, "-write-key", `obj-${o.size}`]);
    const smallFile = join(scratch, "small.bin");
    s3srv(ep.virtualServer, ["-write", smallFile, "-write-key", `obj-${o.smallSize}`]);
    smallBytes = readFileSync(smallFile);
    rmSync(smallFile);
  } else {
    // The bucket may be there already: mb's failure is not one.
    spawnSync(process.execPath, [S3X_BIN, "mb", `s3://${ep.bucket}`, "--endpoint-url", ep.url], { env, stdio: "ignore" });
    bigKey = "cores/big";
    o.log(`uploading ${o.size} random bytes to s3://${ep.bucket}/${bigKey}`);
    bigSha = await writeRandomFile(uploadFile, o.size);
    s3x(["cp", uploadFile, `s3://${ep.bucket}/${bigKey}`, ...flags], env);
    smallBytes = randomBytes(o.smallSize);
  }
  if (o.small) {
    const dir = join(scratch, "small-source");
    mkdirSync(dir);
    for (let i = 0; i < o.smallCount; i++) writeFileSync(join(dir, `${String(i).padStart(6, "0")}.bin`), smallBytes);
    o.log(`uploading ${o.smallCount} × ${o.smallSize} bytes under s3://${ep.bucket}/${smallPrefix}`);
    s3x(["cp", dir, `s3://${ep.bucket}/${smallPrefix}`, "--recursive", ...flags], env);
    rmSync(dir, { recursive: true, force: true });
  }
  return { bigKey, bigSha, uploadFile, smallPrefix, smallSha: createHash("sha256").update(smallBytes).digest("hex") };
}

/** The size of an object by HEAD (-1 when it is not there); deletes it afterwards, when asked, to keep the server's memory flat. */
export async function headSize(ep: CoresEndpoint, key: string, deleteAfter: boolean): Promise<number> {
  const agent = new https.Agent(ep.caFile ? { ca: readFileSync(ep.caFile) } : {});
  const client = new S3Client({
    endpoint: ep.url,
    region: ep.region,
    forcePathStyle: true,
    credentials: { accessKeyId: ep.accessKeyId, secretAccessKey: ep.secretAccessKey },
    requestHandler: new NodeHttpHandler({ httpsAgent: agent }),
  });
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: ep.bucket, Key: key })).catch(() => undefined);
    if (deleteAfter) await client.send(new DeleteObjectCommand({ Bucket: ep.bucket, Key: key }));
    return head?.ContentLength ?? -1;
  } finally {
    client.destroy();
    agent.destroy();
  }
}
