import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureRadosgwInstalled, startRadosgw, type RadosgwOptions, type RadosgwServer } from "../test/support/radosgw.js";
import { shuffleOrder } from "../src/plan/shuffle.js";

// The SDK's "future releases need Node 22" notice is noise in benchmark output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** The CLI under test, as users run it. */
export const S3X_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "s3x.js");

/** The repository's root (bench scripts run from dist/bench/). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** `--name N` from the command line, or the fallback. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** `--name VALUE` from the command line as text, or the fallback. */
export function argText(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

/** Whether `--name` is on the command line. */
export function flag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}

/**
 * CPU-seconds (user + system) the given processes have used so far, from
 * /proc/PID/stat (utime, stime in USER_HZ = 100 ticks per second). Read before
 * and after a command, the difference is what the server spent on it.
 */
export function serverCpuSeconds(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // a daemon that exited has nothing to add
    }
  }
  return total;
}

/** The middle value; the mean of the two middle ones for an even count. */
/** Variables that point TLS clients at a CA bundle (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, …). */
const CA_BUNDLE_VARIABLE = /^NODE_EXTRA_CA_CERTS$|^SSL_CERT_(FILE|DIR)$|CA_BUNDLE|CA_CERTS|_SSL_ROOTS_|^PIP_CERT$|SSL_CAINFO$/i;

/**
 * This process's environment without the user's AWS/rclone/s3cmd set-up, any
 * proxy or any CA bundle: every tool talks to the local endpoint only, over
 * plain HTTP. CA bundles matter only for TLS, but one costs Node a lot: with
 * NODE_EXTRA_CA_CERTS set, Node 20 parses its whole root store at start,
 * before any JavaScript runs (~80 ms of CPU per process here: `node -e 0`
 * 0.12 s against 0.04), which would bill every Node tool for a setting of
 * this machine, not of the tool.
 */
export function toolEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(AWS_|RCLONE_|S3CMD)/i.test(k) || /_proxy$/i.test(k) || CA_BUNDLE_VARIABLE.test(k)) continue;
    env[k] = v;
  }
  return env;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs a benchmark body against a fresh radosgw (memstore) and a scratch
 * directory, and always stops the server and removes the directory.
 */
export function runBench(body: (server: RadosgwServer, dir: string) => Promise<void>, options: RadosgwOptions = {}): void {
  const main = async (): Promise<void> => {
    ensureRadosgwInstalled((l) => console.error(`[radosgw] ${l}`));
    const server = await startRadosgw(options);
    const dir = await mkdtemp(join(tmpdir(), "s3x-bench-"));
    try {
      await body(server, dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await server.stop();
    }
  };
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

/** Creates a bucket on the benchmark's server. */
export async function createBucket(server: RadosgwServer, name: string): Promise<void> {
  const client = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  } finally {
    client.destroy();
  }
}

/** Writes `size` random bytes to `path` (64 MiB at a time); returns their sha256. */
export async function writeRandomFile(path: string, size: number): Promise<string> {
  const hash = createHash("sha256");
  const fh = await open(path, "w");
  try {
    for (let written = 0; written < size; written += 64 * 1024 * 1024) {
      const chunk = randomBytes(Math.min(64 * 1024 * 1024, size - written));
      hash.update(chunk);
      await fh.write(chunk);
    }
  } finally {
    await fh.close();
  }
  return hash.digest("hex");
}

/**
 * The order of `items` in round `round` of a benchmark's `label`ed part:
 * a permutation shuffled by a fixed seed (a rerun repeats it), different
 * every round.
 *
 * Why not a rotation (A B C, B C A, C A B): it changes who starts a round,
 * but every tool still runs right after the same other tool. On this VM a
 * run can depend on the one before it: in three harness runs of s3x and
 * tuned rclone (2026-11-26), s3x's 1 GiB HTTPS downloads took 3.35–3.87 s
 * when they opened a round and 3.83–5.87 s (median 4.89) when they followed
 * tuned rclone (where recorded: 1–2 CPU-s more system time and 4–5× the
 * voluntary context switches), while rclone after s3x showed no such rise.
 * By hand, the same sequence did not reproduce it; the cause is not known.
 * A fixed neighbour turns such an effect into a bias against one tool;
 * shuffled neighbours turn it into noise that every tool shares.
 */
export function roundOrder<T extends { id: string }>(items: readonly T[], label: string, round: number): T[] {
  return shuffleOrder(items, `${label} round ${round}`, (item) => item.id);
}
