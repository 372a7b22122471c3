/**
 * Many small objects, against the local radosgw (memstore): upload and
 * download of 2,000 × 64 KiB files (objects/s), their server-side copy to
 * another prefix (objects/s), a listing of 10,000 keys (keys/s) and a no-op
 * sync of the 2,000 files (seconds, start-up included).
 * Each figure is the median of --runs runs; client CPU and peak RSS come from
 * GNU time, every transfer is verified file by file.
 *
 *   npm run bench:many
 *   npm run bench:many -- --files 500 --keys 2000 --runs 1   # quick look
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { arg, median, runBench, S3X_BIN as BIN } from "./common.js";



interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
}

function timed(args: string[], env: NodeJS.ProcessEnv): Sample {
  const started = process.hrtime.bigint();
  const res = spawnSync("/usr/bin/time", ["-f", "TIME %U %S %M", process.execPath, BIN, ...args], { env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const match = /TIME (\S+) (\S+) (\d+)/.exec(res.stderr);
  if (res.status !== 0 || !match) throw new Error(`s3x ${args.join(" ")} failed (${res.status}):\n${res.stderr.slice(-2000)}`);
  return { wall, cpu: Number(match[1]) + Number(match[2]), rssMiB: Number(match[3]) / 1024 };
}

async function hashesOf(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of await readdir(dir)) out.set(name, createHash("sha256").update(await readFile(join(dir, name))).digest("hex"));
  return out;
}

/** Key (relative to `prefix`) → ETag, as `s3x ls --recursive --json` lists them: a copy keeps each object's MD5 ETag. */
function etagsUnder(prefix: string, env: NodeJS.ProcessEnv): Map<string, string> {
  const res = spawnSync(process.execPath, [BIN, "ls", "--recursive", "--json", prefix], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`s3x ls ${prefix} failed:\n${res.stderr}`);
  const base = prefix.slice(prefix.indexOf("/", "s3://".length) + 1);
  const out = new Map<string, string>();
  for (const line of res.stdout.trim().split("\n")) {
    const entry = JSON.parse(line) as { key: string; etag: string };
    out.set(entry.key.slice(base.length), entry.etag);
  }
  return out;
}

const files = arg("files", 2000);
const keys = arg("keys", 10_000);
const runs = arg("runs", 3);
runBench(async (server, dir) => {
  const client = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });
  await client.send(new CreateBucketCommand({ Bucket: "many" }));
  // 10,000 keys to list, put once with the SDK.
  for (let i = 0; i < keys; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, keys - i) }, (_, j) => client.send(new PutObjectCommand({ Bucket: "many", Key: `list/k${String(i + j).padStart(6, "0")}`, Body: "x" }))));
  }
  client.destroy();
  const src = join(dir, "src");
  await mkdir(src);
  for (let i = 0; i < files; i++) await writeFile(join(src, `f${String(i).padStart(5, "0")}.bin`), randomBytes(64 * 1024));
  const expected = await hashesOf(src);
  const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey, AWS_REGION: server.region, AWS_ENDPOINT_URL: server.endpoint };
  const common = ["--no-progress", "--quiet"];
  const results: Record<string, Sample[]> = { upload: [], download: [], copy: [], list: [], sync: [] };
  for (let run = 0; run < runs; run++) {
    results.upload.push(timed(["cp", "--recursive", src, `s3://many/up${run}/`, ...common], env));
    const down = join(dir, `down${run}`);
    results.download.push(timed(["cp", "--recursive", `s3://many/up${run}/`, down, ...common], env));
    const got = await hashesOf(down);
    if (got.size !== expected.size || [...expected].some(([k, v]) => got.get(k) !== v)) throw new Error("download did not verify");
    await rm(down, { recursive: true, force: true });
    results.copy.push(timed(["cp", "--recursive", `s3://many/up${run}/`, `s3://many/copy${run}/`, ...common], env));
    const copied = etagsUnder(`s3://many/copy${run}/`, env);
    const source = etagsUnder(`s3://many/up${run}/`, env);
    if (copied.size !== files || [...source].some(([k, v]) => copied.get(k) !== v)) throw new Error("copy did not verify");
    const listed = spawnSync(process.execPath, [BIN, "ls", "--recursive", "s3://many/list/"], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (listed.stdout.trim().split("\n").length !== keys) throw new Error(`ls listed ${listed.stdout.trim().split("\n").length} keys, expected ${keys}`);
    results.list.push(timed(["ls", "--recursive", "s3://many/list/"], env));
    results.sync.push(timed(["sync", src, `s3://many/up0/`, ...common], env));
  }
  const n = (k: string): Sample => ({ wall: median(results[k].map((s) => s.wall)), cpu: median(results[k].map((s) => s.cpu)), rssMiB: median(results[k].map((s) => s.rssMiB)) });
  console.log(`\ns3x many-objects benchmark — ${cpus().length} cores, radosgw memstore on 127.0.0.1, medians of ${runs}\n`);
  console.log("| workload | wall s | rate | client CPU-s | peak RSS MiB |");
  console.log("|---|---|---|---|---|");
  const up = n("upload");
  const down = n("download");
  const copy = n("copy");
  const list = n("list");
  const sync = n("sync");
  console.log(`| upload ${files} × 64 KiB | ${up.wall.toFixed(2)} | ${(files / up.wall).toFixed(0)} objects/s | ${up.cpu.toFixed(2)} | ${up.rssMiB.toFixed(0)} |`);
  console.log(`| download ${files} × 64 KiB | ${down.wall.toFixed(2)} | ${(files / down.wall).toFixed(0)} objects/s | ${down.cpu.toFixed(2)} | ${down.rssMiB.toFixed(0)} |`);
  console.log(`| copy ${files} × 64 KiB S3 → S3 | ${copy.wall.toFixed(2)} | ${(files / copy.wall).toFixed(0)} objects/s | ${copy.cpu.toFixed(2)} | ${copy.rssMiB.toFixed(0)} |`);
  console.log(`| list ${keys} keys | ${list.wall.toFixed(2)} | ${(keys / list.wall).toFixed(0)} keys/s | ${list.cpu.toFixed(2)} | ${list.rssMiB.toFixed(0)} |`);
  console.log(`| no-op sync of ${files} files | ${sync.wall.toFixed(2)} | — | ${sync.cpu.toFixed(2)} | ${sync.rssMiB.toFixed(0)} |`);
});
