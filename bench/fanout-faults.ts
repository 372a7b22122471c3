/**
 * Fan-out under faults, timed, in the network lab (test/support/netlab.ts):
 * the speed targets that used to sit in test/integration/fanout.test.ts,
 * where a busy neighbour on two shared cores decided them. The tests now
 * check what the fan-out did (bytes per address, stragglers, hedges); this
 * benchmark checks how long it took, on a machine kept quiet for it.
 *
 * radosgw on 4 loopback addresses at 50 MB/s each (a 5th spare), a 400 MiB
 * object, and for each scenario the transfer's own --json seconds against
 * its target:
 *
 *  - 4 addresses vs 1 pinned: ≥ 3× (the figure);
 *  - one address refused / black-holed / stalling / resetting: ≥ 60 % of
 *    the healthy fleet's throughput;
 *  - one address slowed to 5 MB/s: ≤ 1.5× the time of the healthy three alone;
 *  - 64 MiB in 8 MiB parts, one address at 5 MB/s holding tail parts: under
 *    the healthy three's time + 1.7 s (one part's time on the slow address);
 *  - 20 MiB with a black-holed address first in line: < 2 s with a 10 s
 *    connect timeout, < 1.5 s with the default.
 *
 *   npm run bench:fanout-faults            # 1 run of each, exit 1 if a target is missed
 *
 * Needs root, util-linux, iproute2 and nftables, like the lab tests.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileHash, randomFile } from "../test/support/cli.js";
import { netlabUnavailable, startNetlab, type Fault, type LabRunResult, type NetLab } from "../test/support/netlab.js";

const MiB = 1024 * 1024;
const HOST = "s3.bench-faults.invalid";
const FLEET = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"];
const MB_PER_ADDRESS = 50;
const SIZE = 400 * MiB;

interface Seconds {
  seconds: number;
  bytes: number;
}

const results: { scenario: string; measured: string; target: string; met: boolean }[] = [];

function record(scenario: string, measured: string, target: string, met: boolean): void {
  results.push({ scenario, measured, target, met });
  process.stdout.write(`${met ? "ok  " : "MISS"} ${scenario}: ${measured} (target ${target})\n`);
}

function seconds(run: LabRunResult): Seconds {
  if (run.code !== 0) throw new Error(`s3x failed: ${run.stderr}`);
  return JSON.parse(run.stdout.toString().trim().split("\n").pop()!) as Seconds;
}

const mbps = (s: Seconds): number => s.bytes / s.seconds / 1e6;
const pinned = (addresses: string[]): string[] => ["--resolve", `${HOST}=${addresses.join(",")}`];

async function main(): Promise<void> {
  const unavailable = netlabUnavailable();
  if (unavailable) {
    process.stderr.write(`bench:fanout-faults: ${unavailable}\n`);
    process.exit(2);
  }
  const dir = await mkdtemp(join(tmpdir(), "s3x-bench-faults-"));
  const lab = await startNetlab({ hostName: HOST, addresses: [...FLEET, "127.0.0.6"], dnsAnswer: FLEET, mbitPerAddress: MB_PER_ADDRESS * 8 });
  try {
    await lab.createBucket("bench");
    const source = join(dir, "source.bin");
    const hash = await randomFile(source, SIZE);
    const json = ["--json", "--no-progress"];
    const up = async (key: string, extra: string[] = []): Promise<Seconds> => {
      const s = seconds(await lab.s3x(["cp", source, `s3://bench/${key}`, ...json, ...extra]));
      if ((await lab.objectHash("bench", key)) !== hash) throw new Error(`uploaded bytes of ${key} differ`);
      return s;
    };
    const down = async (key: string, extra: string[] = [], expected = hash): Promise<Seconds> => {
      const target = join(dir, "down.bin");
      const s = seconds(await lab.s3x(["cp", `s3://bench/${key}`, target, ...json, ...extra]));
      if ((await fileHash(target)) !== expected) throw new Error(`downloaded bytes of ${key} differ`);
      await rm(target);
      return s;
    };

    const healthy = { upload: await up("big.bin"), download: await down("big.bin") };
    const one = { upload: await up("pinned.bin", pinned([FLEET[0]])), download: await down("big.bin", pinned([FLEET[0]])) };
    for (const direction of ["upload", "download"] as const) {
      const ratio = mbps(healthy[direction]) / mbps(one[direction]);
      record(`${direction}, 4 addresses vs 1`, `${ratio.toFixed(2)}× (${mbps(healthy[direction]).toFixed(0)} vs ${mbps(one[direction]).toFixed(0)} MB/s)`, "≥ 3×", ratio >= 3);
    }

    const bad = FLEET[3];
    for (const fault of ["refuse", "blackhole", "stall", "reset"] as Fault[]) {
      await lab.setFault(bad, fault);
      try {
        const extra = fault === "blackhole" ? ["--connect-timeout", "2"] : [];
        const faulty = { download: await down("big.bin", extra), upload: await up(`fault-${fault}.bin`, extra) };
        for (const direction of ["upload", "download"] as const) {
          const share = mbps(faulty[direction]) / mbps(healthy[direction]);
          record(`${direction}, one address ${fault}`, `${(share * 100).toFixed(0)} % of healthy`, "≥ 60 %", share >= 0.6);
        }
      } finally {
        await lab.setFault(bad, null);
      }
    }

    await slowAddress(lab, up, down, bad);
    await tailHedges(lab, dir, bad);
    await blackHoleFirst(lab, dir, bad);
  } finally {
    await lab.close();
    await rm(dir, { recursive: true, force: true });
  }
  const missed = results.filter((r) => !r.met);
  process.stdout.write(`${results.length - missed.length} of ${results.length} targets met\n`);
  if (missed.length > 0) process.exitCode = 1;
}

async function slowAddress(lab: NetLab, up: (key: string, extra?: string[]) => Promise<Seconds>, down: (key: string, extra?: string[]) => Promise<Seconds>, slow: string): Promise<void> {
  const three = FLEET.filter((a) => a !== slow);
  const healthyThree = { download: await down("big.bin", pinned(three)), upload: await up("three.bin", pinned(three)) };
  await lab.setRate(slow, 5);
  try {
    const withSlow = { download: await down("big.bin"), upload: await up("slow.bin") };
    for (const direction of ["upload", "download"] as const) {
      const ratio = withSlow[direction].seconds / healthyThree[direction].seconds;
      record(`${direction}, one address at 5 MB/s`, `${ratio.toFixed(2)}× the healthy three's time`, "≤ 1.5×", ratio <= 1.5);
    }
  } finally {
    await lab.setRate(slow, MB_PER_ADDRESS);
  }
}

async function tailHedges(lab: NetLab, dir: string, slow: string): Promise<void> {
  const object = join(dir, "tail.bin");
  const hash = await randomFile(object, 64 * MiB);
  const parts = ["--json", "--no-progress", "--part-size", "8MiB"];
  const three = pinned(FLEET.filter((a) => a !== slow));
  const target = join(dir, "tail-down.bin");
  const reference = {
    upload: seconds(await lab.s3x(["cp", object, "s3://bench/tail.bin", ...parts, ...three])).seconds,
    download: seconds(await lab.s3x(["cp", "s3://bench/tail.bin", target, ...parts, ...three])).seconds,
  };
  await lab.setRate(slow, 5);
  try {
    const measured = {
      upload: seconds(await lab.s3x(["cp", object, "s3://bench/tail.bin", ...parts])).seconds,
      download: seconds(await lab.s3x(["cp", "s3://bench/tail.bin", target, ...parts])).seconds,
    };
    if ((await fileHash(target)) !== hash) throw new Error("tail download differs");
    for (const direction of ["upload", "download"] as const) {
      const extra = measured[direction] - reference[direction];
      record(`${direction}, 64 MiB, tail parts on a 5 MB/s address`, `+${extra.toFixed(2)} s over the healthy three`, "< +1.7 s", extra < 1.7);
    }
  } finally {
    await lab.setRate(slow, MB_PER_ADDRESS);
    await rm(target, { force: true });
  }
}

async function blackHoleFirst(lab: NetLab, dir: string, dead: string): Promise<void> {
  const small = join(dir, "small.bin");
  const hash = await randomFile(small, 20 * MiB);
  seconds(await lab.s3x(["cp", small, "s3://bench/small.bin", "--json", "--no-progress"]));
  const order = pinned([dead, ...FLEET.filter((a) => a !== dead)]);
  const target = join(dir, "small-down.bin");
  await lab.setFault(dead, "blackhole");
  try {
    const slowConnect = ["--connect-timeout", "10"];
    const down = seconds(await lab.s3x(["cp", "s3://bench/small.bin", target, "--json", "--no-progress", "--part-size", "32MiB", ...order, ...slowConnect]));
    if ((await fileHash(target)) !== hash) throw new Error("small download differs");
    const up = seconds(await lab.s3x(["cp", small, "s3://bench/small-up.bin", "--json", "--no-progress", "--multipart-threshold", "5MiB", "--part-size", "5MiB", ...order, ...slowConnect]));
    record("download, 20 MiB, black-holed address first, 10 s connect timeout", `${down.seconds} s`, "< 2 s", down.seconds < 2);
    record("upload, 20 MiB, black-holed address first, 10 s connect timeout", `${up.seconds} s`, "< 2 s", up.seconds < 2);
    const again = seconds(await lab.s3x(["cp", "s3://bench/small.bin", target, "--json", "--no-progress", ...order]));
    record("download, 20 MiB, black-holed address first, default connect timeout", `${again.seconds} s`, "< 1.5 s", again.seconds < 1.5);
  } finally {
    await lab.setFault(dead, null);
    await rm(target, { force: true });
  }
}

await main();
