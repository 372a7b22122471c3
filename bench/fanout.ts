/**
 * Fan-out benchmark in the network lab (test/support/netlab.ts): radosgw on
 * 8 loopback addresses, each capped at 50 MB/s by its own tc htb class
 * (8 × 50 = 400 MB/s, what two cores can move), and s3x pinned with
 * --resolve to the first 1, 2, 4 and 8 of them. Prints upload and download
 * throughput and the client's CPU-seconds per GiB, bytes verified by hash.
 *
 *   npm run bench:fanout                 # 400 MiB object (the size of the lab tests), 1 run each
 *   npm run bench:fanout -- --size 512 --runs 3
 *
 * Needs root, util-linux, iproute2 and nftables, like the lab tests.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileHash, randomFile } from "../test/support/cli.js";
import { netlabUnavailable, startNetlab, type LabRunResult } from "../test/support/netlab.js";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const HOST = "s3.bench.invalid";
const ADDRESSES = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const MB_PER_ADDRESS = 50;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

interface Measurement {
  mbps: number;
  cpuPerGiB: number;
}

function measure(run: LabRunResult, bytes: number): Measurement {
  if (run.code !== 0) throw new Error(`s3x failed: ${run.stderr}`);
  const stats = JSON.parse(run.stdout.toString().trim().split("\n").pop()!) as { seconds: number };
  return { mbps: bytes / stats.seconds / 1e6, cpuPerGiB: ((run.cpuSeconds ?? 0) * GiB) / bytes };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const unavailable = netlabUnavailable();
  if (unavailable) {
    process.stderr.write(`bench:fanout: ${unavailable}\n`);
    process.exit(2);
  }
  const size = option("size", 400) * MiB;
  const runs = option("runs", 1);
  const dir = await mkdtemp(join(tmpdir(), "s3x-bench-fanout-"));
  const lab = await startNetlab({ hostName: HOST, addresses: ADDRESSES, mbitPerAddress: MB_PER_ADDRESS * 8 });
  try {
    await lab.createBucket("bench");
    const source = join(dir, "source.bin");
    const hash = await randomFile(source, size);
    const target = join(dir, "target.bin");
    process.stdout.write(`fan-out, ${size / MiB} MiB, addresses capped at ${MB_PER_ADDRESS} MB/s each, median of ${runs}\n`);
    process.stdout.write("addresses | upload MB/s | upload CPU-s/GiB | download MB/s | download CPU-s/GiB\n");
    process.stdout.write("---|---|---|---|---\n");
    for (const count of [1, 2, 4, 8]) {
      const pin = ["--resolve", `${HOST}=${ADDRESSES.slice(0, count).join(",")}`, "--json", "--no-progress"];
      const up: Measurement[] = [];
      const down: Measurement[] = [];
      for (let i = 0; i < runs; i++) {
        up.push(measure(await lab.s3x(["cp", source, "s3://bench/object", ...pin], { measureCpu: true }), size));
        if ((await lab.objectHash("bench", "object")) !== hash) throw new Error("uploaded bytes differ");
        down.push(measure(await lab.s3x(["cp", "s3://bench/object", target, ...pin], { measureCpu: true }), size));
        if ((await fileHash(target)) !== hash) throw new Error("downloaded bytes differ");
        await rm(target);
      }
      const row = [
        count,
        median(up.map((m) => m.mbps)).toFixed(0),
        median(up.map((m) => m.cpuPerGiB)).toFixed(2),
        median(down.map((m) => m.mbps)).toFixed(0),
        median(down.map((m) => m.cpuPerGiB)).toFixed(2),
      ];
      process.stdout.write(row.join(" | ") + "\n");
    }
  } finally {
    await lab.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
