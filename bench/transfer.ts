/**
 * First benchmark: s3x against the local radosgw (memstore), the same server
 * the tests use. Times a 1 GiB upload, a download to a file and a download
 * to stdout hashed by `openssl dgst -sha256`, and prints wall seconds, MB/s,
 * client CPU-seconds per GiB and peak RSS (from GNU time), plus the server's
 * CPU-seconds (from /proc/PID/stat of the Ceph daemons).
 *
 *   npm run bench                 # 1 GiB, 3 runs each, medians
 *   npm run bench -- --size 256   # MiB, for a quick look
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { open, readFile, rm } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { arg, median, runBench, S3X_BIN as BIN } from "./common.js";

const MiB = 1024 * 1024;

interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
  serverCpu: number;
  ok: boolean;
}


function serverCpuSeconds(pids: number[]): number {
  const ticks = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = spawnSync("cat", [`/proc/${pid}/stat`]).stdout.toString();
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      // a daemon that exited has nothing to add
    }
  }
  return total;
}

/** Runs a shell command under GNU time; returns wall, CPU and peak RSS of the whole pipeline's first command. */
function timed(command: string, env: NodeJS.ProcessEnv, pids: number[]): { sample: Sample; stdout: string } {
  const before = serverCpuSeconds(pids);
  const started = process.hrtime.bigint();
  const res = spawnSync("bash", ["-c", command], { env, encoding: "utf8", maxBuffer: 16 * MiB });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const serverCpu = serverCpuSeconds(pids) - before;
  const match = /TIME (\S+) (\S+) (\d+)/.exec(res.stderr);
  if (res.status !== 0 || !match) throw new Error(`benchmark command failed (${res.status}): ${command}\n${res.stderr}`);
  return { sample: { wall, cpu: Number(match[1]) + Number(match[2]), rssMiB: Number(match[3]) / 1024, serverCpu, ok: true }, stdout: res.stdout };
}


const sizeMiB = arg("size", 1024);
const runs = arg("runs", 3);
const size = sizeMiB * MiB;
const gib = size / (1024 * MiB);
runBench(async (server, dir) => {
  const client = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  await client.send(new CreateBucketCommand({ Bucket: "bench" }));
  client.destroy();
  const src = join(dir, "src.bin");
  const hash = createHash("sha256");
  const fh = await open(src, "w");
  for (let written = 0; written < size; written += 64 * MiB) {
    const chunk = randomBytes(Math.min(64 * MiB, size - written));
    hash.update(chunk);
    await fh.write(chunk);
  }
  await fh.close();
  const expected = hash.digest("hex");
  const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey, AWS_REGION: server.region };
  const time = `/usr/bin/time -f "TIME %U %S %M"`;
  const s3x = `${time} node ${BIN}`;
  const ep = `--endpoint-url ${server.endpoint} --no-progress --quiet`;
  const workloads: { name: string; command: string; verify: (stdout: string) => Promise<boolean> }[] = [
    { name: `upload ${sizeMiB} MiB file`, command: `${s3x} cp ${src} s3://bench/obj ${ep}`, verify: async () => true },
    {
      name: `download ${sizeMiB} MiB → file`,
      command: `${s3x} cp s3://bench/obj ${join(dir, "down.bin")} ${ep}`,
      verify: async () => createHash("sha256").update(await readFile(join(dir, "down.bin"))).digest("hex") === expected,
    },
    {
      name: `download ${sizeMiB} MiB → stdout | openssl`,
      command: `${s3x} cp s3://bench/obj - ${ep} | openssl dgst -sha256 -r`,
      verify: async (stdout) => stdout.startsWith(expected),
    },
    { name: `upload ${sizeMiB} MiB from stdin`, command: `cat ${src} | ${s3x} cp - s3://bench/obj-stdin ${ep}`, verify: async () => true },
  ];
  const results = new Map<string, Sample[]>();
  for (let run = 0; run < runs; run++) {
    for (const w of workloads) {
      const { sample, stdout } = timed(w.command, env, server.pids());
      sample.ok = await w.verify(stdout);
      if (!sample.ok) throw new Error(`${w.name}: bytes did not verify`);
      results.set(w.name, [...(results.get(w.name) ?? []), sample]);
      await rm(join(dir, "down.bin"), { force: true });
    }
  }
  console.log(`\ns3x benchmark — ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB RAM, radosgw memstore on 127.0.0.1, medians of ${runs}\n`);
  console.log("| workload | wall s | MB/s | client CPU-s/GiB | peak RSS MiB | server CPU-s |");
  console.log("|---|---|---|---|---|---|");
  for (const [name, samples] of results) {
    const wall = median(samples.map((s) => s.wall));
    console.log(
      `| ${name} | ${wall.toFixed(2)} | ${(size / wall / 1e6).toFixed(0)} | ${(median(samples.map((s) => s.cpu)) / gib).toFixed(2)} | ${median(samples.map((s) => s.rssMiB)).toFixed(0)} | ${median(samples.map((s) => s.serverCpu)).toFixed(2)} |`,
    );
  }
}, { memstoreBytes: Math.max(8 * 1024 * MiB, size * 4) });
