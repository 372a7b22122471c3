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
import { createHash } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { arg, createBucket, median, runBench, S3X_BIN as BIN, writeRandomFile } from "./common.js";
import { timed, TIME_PREFIX, type Sample } from "./timed.js";

const MiB = 1024 * 1024;

const sizeMiB = arg("size", 1024);
const runs = arg("runs", 3);
const size = sizeMiB * MiB;
const gib = size / (1024 * MiB);
runBench(async (server, dir) => {
  await createBucket(server, "bench");
  const src = join(dir, "src.bin");
  const expected = await writeRandomFile(src, size);
  const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey, AWS_REGION: server.region };
  const s3x = `${TIME_PREFIX} node ${BIN}`;
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
      const { sample, stdout } = await timed(w.command, env, server.pids());
      if (!(await w.verify(stdout))) throw new Error(`${w.name}: bytes did not verify`);
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
