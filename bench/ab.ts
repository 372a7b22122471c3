/**
 * A/B of two builds of s3x in one run, interleaved (A, B, A, B, …) against
 * one radosgw (memstore), so both see the same machine load: for deciding
 * whether hand-written code (a listing reader, a signer) earns its keep
 * end to end. Each side is a directory holding a copy of bin/s3x.js and
 * dist/s3x.cjs (+ its code cache) with node_modules linked beside them.
 * Prints wall seconds and client CPU-seconds (GNU time) per pair, the
 * medians, and the median of the per-pair differences.
 *
 *   npm run build && node dist/bench/ab.js --a /tmp/x --b /tmp/y --workload list --pairs 7
 *   workloads: list (ls -r of --keys keys), download (cp -r of --files × 64 KiB), sync (no-op sync of those files)
 *   --max-concurrent-requests N: radosgw's 'rgw max concurrent requests' (small: real 503 SlowDown)
 *   --concurrency N: passed to s3x (requests in flight)
 * A run that fails (s3x exits non-zero) is counted and left out of the medians.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { arg, argText, median, runBench } from "./common.js";

interface Sample {
  wall: number;
  cpu: number;
  /** s3x exited 0. */
  ok: boolean;
}

function timed(build: string, args: string[], env: NodeJS.ProcessEnv): Sample {
  const started = process.hrtime.bigint();
  const res = spawnSync("/usr/bin/time", ["-f", "TIME %U %S", process.execPath, join(build, "bin", "s3x.js"), ...args], { env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const match = /TIME (\S+) (\S+)/.exec(res.stderr);
  if (!match) throw new Error(`${build}: s3x ${args.join(" ")} did not run (${res.status}):\n${res.stderr.slice(-2000)}`);
  if (res.status !== 0) {
    const said = res.stderr.split("\n").filter((l) => l.trim() !== "" && !/^(TIME |Command exited)/.test(l));
    console.log(`${build}: s3x ${args.join(" ")} exited ${res.status}: ${said.slice(0, 3).join(" | ")}`);
  }
  return { wall, cpu: Number(match[1]) + Number(match[2]), ok: res.status === 0 };
}

/** "median (min-max)" of the values. */
function spread(values: number[]): string {
  if (values.length === 0) return "-";
  return `${median(values).toFixed(3)} (${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)})`;
}

const a = argText("a", "");
const b = argText("b", "");
const workload = argText("workload", "list");
const pairs = arg("pairs", 7);
const keys = arg("keys", 10_000);
const files = arg("files", 2000);
const maxConcurrentRequests = arg("max-concurrent-requests", 0);
const concurrency = arg("concurrency", 0);
if (!a || !b) throw new Error("--a DIR and --b DIR are required");

runBench(async (server, dir) => {
  const client = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });
  await client.send(new CreateBucketCommand({ Bucket: "abtest" }));
  const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey, AWS_REGION: server.region, AWS_ENDPOINT_URL: server.endpoint };
  const quiet = ["--no-progress", "--quiet", ...(concurrency > 0 ? ["--concurrency", String(concurrency)] : [])];
  let command: (run: string) => string[];
  if (workload === "list") {
    for (let i = 0; i < keys; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, keys - i) }, (_, j) => client.send(new PutObjectCommand({ Bucket: "abtest", Key: `list/k${String(i + j).padStart(6, "0")}`, Body: "x" }))));
    }
    command = () => ["ls", "--recursive", "s3://abtest/list/"];
  } else {
    const src = join(dir, "src");
    await mkdir(src);
    for (let i = 0; i < files; i++) await writeFile(join(src, `f${String(i).padStart(5, "0")}.bin`), randomBytes(64 * 1024));
    const seeded = spawnSync(process.execPath, [join(a, "bin", "s3x.js"), "cp", "--recursive", src, "s3://abtest/files/", ...quiet], { env, encoding: "utf8" });
    if (seeded.status !== 0) throw new Error(`seeding failed: ${seeded.stderr}`);
    command = workload === "download" ? (run) => ["cp", "--recursive", "s3://abtest/files/", join(dir, run), ...quiet] : () => ["sync", src, "s3://abtest/files/", ...quiet];
  }
  client.destroy();
  const results: { a: Sample; b: Sample }[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    // Alternate which side goes first, so neither always runs on a warmer machine.
    const order = pair % 2 === 0 ? (["a", "b"] as const) : (["b", "a"] as const);
    const row = {} as { a: Sample; b: Sample };
    for (const side of order) {
      row[side] = timed(side === "a" ? a : b, command(`${side}${pair}`), env);
      await rm(join(dir, `${side}${pair}`), { recursive: true, force: true });
    }
    results.push(row);
    const mark = (x: Sample) => (x.ok ? "" : " FAILED");
    console.log(`pair ${pair + 1}: A ${row.a.wall.toFixed(3)} s ${row.a.cpu.toFixed(2)} CPU-s${mark(row.a)} | B ${row.b.wall.toFixed(3)} s ${row.b.cpu.toFixed(2)} CPU-s${mark(row.b)}`);
  }
  const ok = (side: "a" | "b") => results.filter((r) => r[side].ok).map((r) => r[side]);
  const both = results.filter((r) => r.a.ok && r.b.ok);
  console.log(`\n${workload}, ${pairs} interleaved pairs — A: ${a}, B: ${b}`);
  console.log("| | runs ok | wall s, median (min-max) | client CPU-s, median (min-max) |\n|---|---|---|---|");
  console.log(`| A | ${ok("a").length}/${pairs} | ${spread(ok("a").map((r) => r.wall))} | ${spread(ok("a").map((r) => r.cpu))} |`);
  console.log(`| B | ${ok("b").length}/${pairs} | ${spread(ok("b").map((r) => r.wall))} | ${spread(ok("b").map((r) => r.cpu))} |`);
  console.log(`| B − A per pair | ${both.length} pairs | ${spread(both.map((r) => r.b.wall - r.a.wall))} | ${spread(both.map((r) => r.b.cpu - r.a.cpu))} |`);
  console.log(`B used more CPU in ${both.filter((r) => r.b.cpu > r.a.cpu).length} of ${both.length} pairs, more wall time in ${both.filter((r) => r.b.wall > r.a.wall).length}.`);
}, maxConcurrentRequests > 0 ? { maxConcurrentRequests } : {});
