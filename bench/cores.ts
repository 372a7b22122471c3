/**
 * `npm run bench:cores` (issue 37, point 4): what each client gets out of 1,
 * 2, 4, … cores. The server and the clients are pinned to disjoint cores
 * (taskset); for each thread count N up to the client's cores, s3x, the floor
 * (bench/floor/tls-ranged-get.cjs: Node's own TLS ranged GETs, nothing else)
 * and rclone run interleaved in a shuffled order every round, over HTTPS:
 *
 *   download  one large object to a file (the floor: to nowhere, it only counts bytes;
 *             floor-writes: the floor writing each range at its offset, as s3x does)
 *   stdout    the same object to stdout, into `openssl dgst -sha256` (on the client's cores too)
 *   upload    a file of that size (on tmpfs) to a new key
 *   small     N × 64 KiB objects under a prefix into a directory (--small-count, default 10,000)
 *
 * s3x: with `--workers N` when `s3x --help` lists it, on N+1 cores; until then
 * s3x on N cores (taskset), which is how issue 37's table was measured (the
 * output says which). The floor: WORKERS=N on N cores, 16 connections. rclone
 * (Debian's; apt-get installs it when missing): on N cores, `--transfers N`,
 * `--multi-thread-streams N`, `--s3-upload-concurrency N`, `--checkers N`.
 *
 * Every run is checked: SHA-256 of the file or the stream against what the
 * server serves (`s3srv -sha256`), each small file's, an upload's size by
 * HEAD, the floor's byte count (floor-writes: its file's). Each cell: median GB/s, client CPU-s per GiB
 * (GNU time, user + system) and server CPU-s (/proc/PID/stat), so that a run
 * the server limits shows as such.
 *
 *   npm run bench:cores -- --server-cores 0 --client-cores 1 --size 1GiB --runs 3 --small-count 2000
 *   npm run bench:cores -- --server-cores 0-5 --client-cores 6-15 --size 8GiB
 *   npm run bench:cores -- --endpoint https://127.0.0.1:7481 --ca-file cert.pem --bucket b --server-pids 123 --client-cores 1
 *   npm run bench:cores -- --radosgw --server-cores 0 --client-cores 1 --workloads download   (radosgw, as `npm run bench`)
 *   options: --runs 3, --workloads download,stdout,upload,small, --tools s3x,floor,floor-writes,rclone,
 *   --small-size 64KiB, --floor-connections 16, --timeout 600 (s per command), --out FILE,
 *   --scratch DIR (where files are written; default /dev/shm),
 *   --s3srv BINARY (a built server), --server-source DIR (default ../shared/bench-cores),
 *   --rclone BINARY (default /usr/bin/rclone; apt-get installs it when missing)
 *
 * Without --endpoint, the Go server of ../shared/bench-cores is built (Go from
 * apt-get if missing) and started on --server-cores with a throw-away
 * certificate. The table goes to stdout and bench/results/cores-<date>.md.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { cpus, loadavg, release, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseSize } from "../src/plan/parts.js";
import { argText, flag, median, REPO_ROOT, roundOrder, S3X_BIN, toolEnvironment } from "./common.js";
import { buildBenchServer, externalEndpoint, parseCores, startBenchServer, startRadosgwEndpoint, threadCounts, type CoresEndpoint } from "./cores-server.js";
import { headSize, prepareObjects, virtualKey, type Workload, WORKLOADS } from "./cores-objects.js";
import { TIME_PREFIX, timed, type Sample } from "./timed.js";

const GiB = 1024 ** 3;
const runs = Number(argText("runs", "3"));
const size = parseSize(argText("size", "1GiB"));
const smallCount = Number(argText("small-count", "10000"));
const smallSize = parseSize(argText("small-size", "64KiB"));
const workloads = argText("workloads", WORKLOADS.join(",")).split(",") as Workload[];
for (const w of workloads) if (!WORKLOADS.includes(w)) throw new Error(`--workloads: ${WORKLOADS.join(", ")}; got ${w}`);
const onlyTools = argText("tools", "s3x,floor,floor-writes,rclone").split(",");
/** rclone's binary: Debian's by default (a copy of it on a machine without network). */
const RCLONE_BIN = argText("rclone", "/usr/bin/rclone");
const floorConnections = Number(argText("floor-connections", "16"));
const limitSeconds = Number(argText("timeout", "600"));
const clientCores = parseCores(argText("client-cores", "1"));
const serverCores = parseCores(argText("server-cores", "0"));
const FLOOR = join(REPO_ROOT, "bench", "floor", "tls-ranged-get.cjs");
const S3X = `${q(process.execPath)} ${q(S3X_BIN)}`;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Single-quotes a word for bash. */
function q(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The file's SHA-256, read 8 MiB at a time (objects may be larger than a Buffer). */
function sha256File(path: string): string {
  const hash = createHash("sha256");
  const chunk = Buffer.allocUnsafe(8 << 20);
  const fd = openSync(path, "r");
  try {
    for (let n; (n = readSync(fd, chunk)) > 0; ) hash.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

/** What one tool runs for one workload at N threads: a bash pipeline, its cores, and how to check the result. */
interface Run {
  command: string;
  cores: number[];
  env: NodeJS.ProcessEnv;
  check: (stdout: string) => string | undefined | Promise<string | undefined>;
}
interface Tool {
  id: "s3x" | "floor" | "floor-writes" | "rclone";
  run(workload: Workload, n: number, round: number): Run | undefined;
}

async function main(): Promise<void> {
  for (const c of clientCores) if (serverCores.includes(c)) throw new Error(`core ${c} is in both --server-cores and --client-cores`);
  // Files are written on tmpfs unless --scratch names another place (npm run bench writes to the temporary directory's disk).
  const scratch = mkdtempSync(join(argText("scratch", existsSync("/dev/shm") ? "/dev/shm" : tmpdir()), "s3x-bench-cores-"));
  const endpointUrl = argText("endpoint", "");
  let endpoint: CoresEndpoint;
  if (flag("radosgw")) {
    endpoint = await startRadosgwEndpoint(serverCores, scratch, size, log);
  } else if (endpointUrl) {
    endpoint = externalEndpoint({
      url: endpointUrl,
      caFile: argText("ca-file", ""),
      bucket: argText("bucket", "bench-cores"),
      region: argText("region", "us-east-1"),
      serverPids: argText("server-pids", "").split(",").filter(Boolean).map(Number),
      serverCores: Number(argText("server-core-count", "0")),
    });
  } else {
    const sourceDir = argText("server-source", join(REPO_ROOT, "..", "shared", "bench-cores"));
    endpoint = await startBenchServer(buildBenchServer(sourceDir, argText("s3srv", ""), log), serverCores, scratch, [virtualKey(size)]);
  }
  try {
    await bench(endpoint, scratch);
  } finally {
    await endpoint.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function bench(ep: CoresEndpoint, scratch: string): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...toolEnvironment(),
    HOME: scratch,
    AWS_ACCESS_KEY_ID: ep.accessKeyId,
    AWS_SECRET_ACCESS_KEY: ep.secretAccessKey,
    AWS_REGION: ep.region,
    AWS_CONFIG_FILE: join(scratch, "aws.cfg"),
    AWS_SHARED_CREDENTIALS_FILE: join(scratch, "aws-credentials"),
    AWS_EC2_METADATA_DISABLED: "true",
    ...(ep.caFile ? { AWS_CA_BUNDLE: ep.caFile } : {}),
  };
  writeFileSync(join(scratch, "aws.cfg"), `[default]\nregion = ${ep.region}\n`);
  writeFileSync(join(scratch, "aws-credentials"), "");
  // rclone 1.60 fails to start with AWS_CA_BUNDLE set ("LoadCustomCABundleError … unsupported transport"); without it, --ca-cert works.
  const rcloneEnv: NodeJS.ProcessEnv = { ...env, AWS_CA_BUNDLE: undefined };
  const rcloneConfig = join(scratch, "rclone.conf");
  writeFileSync(
    rcloneConfig,
    `[cores]\ntype = s3\nprovider = Other\nenv_auth = false\naccess_key_id = ${ep.accessKeyId}\nsecret_access_key = ${ep.secretAccessKey}\n` +
      `endpoint = ${ep.url}\nregion = ${ep.region}\nforce_path_style = true\n`,
  );
  if (onlyTools.includes("rclone") && !existsSync(RCLONE_BIN)) {
    log("installing rclone with apt-get");
    spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "rclone"], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    if (!existsSync(RCLONE_BIN)) throw new Error(`no rclone at ${RCLONE_BIN} and apt-get could not install it: give one with --rclone PATH, or leave it out with --tools s3x,floor`);
  }
  const s3xHelp = spawnSync(process.execPath, [S3X_BIN, "--help"], { encoding: "utf8" }).stdout;
  const hasWorkers = /--workers\b/.test(s3xHelp);
  const s3xMode = hasWorkers
    ? "s3x `--workers N`, pinned to N+1 of the client's cores"
    : "s3x has no `--workers` option: one process pinned (taskset) to N cores, its default settings (issue 37's table was measured so)";
  log(s3xMode);

  const objects = await prepareObjects(ep, env, scratch, { size, smallCount, smallSize, small: workloads.includes("small"), log });
  const s3xFlags = `--endpoint-url ${q(ep.url)} --no-progress`;
  const remote = (key: string): string => q(`cores:${ep.bucket}/${key}`);
  // The Go server keeps no bytes, so the ETags of what it was sent are no MD5s: rclone would call every transfer corrupt
  // (the SHA-256 checks here cover the bytes).
  const rclone = `${q(RCLONE_BIN)} --config ${q(rcloneConfig)} -q${ep.caFile ? ` --ca-cert ${q(ep.caFile)}` : ""}${ep.virtualServer ? " --ignore-checksum" : ""}`;
  const firstCores = (n: number): number[] => clientCores.slice(0, Math.min(n, clientCores.length));
  const shaCheck = (want: string) => (out: string) => (out.includes(want) ? undefined : `SHA-256 ${out.trim().slice(-64)} is not ${want}`);
  const fileCheck = (path: string) => () => {
    const got = sha256File(path);
    rmSync(path, { force: true });
    return got === objects.bigSha ? undefined : `SHA-256 of the file ${got} is not ${objects.bigSha}`;
  };
  const upCheck = (key: string) => () => headSize(ep, key, true).then((n) => (n === size ? undefined : `uploaded ${n} bytes, not ${size}`));
  const dirCheck = (dir: string) => () => {
    const names = readdirSync(dir);
    const wrong = names.filter((name) => sha256File(join(dir, name)) !== objects.smallSha).length;
    rmSync(dir, { recursive: true, force: true });
    if (names.length !== smallCount) return `${names.length} files, not ${smallCount}`;
    return wrong === 0 ? undefined : `${wrong} files with wrong bytes`;
  };

  const allTools: Tool[] = [
    {
      id: "s3x",
      run: (w, n, round) => {
        const cores = firstCores(hasWorkers ? n + 1 : n);
        const x = `${TIME_PREFIX} ${S3X} ${hasWorkers ? `--workers ${n} ` : ""}`;
        const file = join(scratch, `down-s3x`);
        const key = `cores/up-s3x-${n}-${round}`;
        const dir = join(scratch, "small-s3x");
        if (w === "download") return { cores, env, command: `${x}cp s3://${ep.bucket}/${objects.bigKey} ${q(file)} ${s3xFlags}`, check: fileCheck(file) };
        if (w === "stdout") return { cores, env, command: `${x}cp s3://${ep.bucket}/${objects.bigKey} - ${s3xFlags} | openssl dgst -sha256`, check: shaCheck(objects.bigSha) };
        if (w === "upload") return { cores, env, command: `${x}cp ${q(objects.uploadFile)} s3://${ep.bucket}/${key} ${s3xFlags}`, check: upCheck(key) };
        return { cores, env, command: `${x}cp s3://${ep.bucket}/${objects.smallPrefix} ${q(dir)} --recursive --only-show-errors ${s3xFlags}`, check: dirCheck(dir) };
      },
    },
    {
      id: "floor",
      run: (w, n) => {
        if (w !== "download") return undefined;
        const url = presign(ep, env, objects.bigKey);
        const floorEnv = { ...env, WORKERS: String(n) };
        const command = `${TIME_PREFIX} ${q(process.execPath)} ${q(FLOOR)} ${q(url)} ${size} ${floorConnections}`;
        return { cores: firstCores(n), env: floorEnv, command, check: () => undefined };
      },
    },
    {
      // The floor with a file download's writes: each range from its part buffer to its offset, 1 MiB at a time, as s3x writes.
      id: "floor-writes",
      run: (w, n) => {
        if (w !== "download") return undefined;
        const url = presign(ep, env, objects.bigKey);
        const file = join(scratch, "down-floor");
        const floorEnv = { ...env, WORKERS: String(n), WRITE: file };
        const command = `${TIME_PREFIX} ${q(process.execPath)} ${q(FLOOR)} ${q(url)} ${size} ${floorConnections}`;
        return { cores: firstCores(n), env: floorEnv, command, check: fileCheck(file) };
      },
    },
    {
      id: "rclone",
      run: (w, n, round) => {
        const cores = firstCores(n);
        const r = `${TIME_PREFIX} ${rclone}`;
        const file = join(scratch, "down-rclone");
        const key = `cores/up-rclone-${n}-${round}`;
        const dir = join(scratch, "small-rclone");
        const env = rcloneEnv;
        if (w === "download") return { cores, env, command: `${r} copyto ${remote(objects.bigKey)} ${q(file)} --transfers ${n} --multi-thread-streams ${n}`, check: fileCheck(file) };
        if (w === "stdout") return { cores, env, command: `${r} cat ${remote(objects.bigKey)} | openssl dgst -sha256`, check: shaCheck(objects.bigSha) };
        if (w === "upload") return { cores, env, command: `${r} copyto ${q(objects.uploadFile)} ${remote(key)} --transfers ${n} --s3-upload-concurrency ${n}`, check: upCheck(key) };
        return { cores, env, command: `${r} copy ${remote(objects.smallPrefix)} ${q(dir)} --transfers ${n} --checkers ${n}`, check: dirCheck(dir) };
      },
    },
  ];
  const tools = allTools.filter((t) => onlyTools.includes(t.id));

  const started = new Date();
  const counts = threadCounts(clientCores.length);
  const samples = new Map<string, { sample?: Sample; cores: number[]; error?: string }[]>();
  const loads: number[] = [];
  for (const w of workloads) {
    for (const n of counts) {
      for (let round = 0; round < runs; round++) {
        for (const tool of roundOrder(tools, `${w} ${n}`, round)) {
          const run = tool.run(w, n, round);
          if (!run) continue;
          if (w !== "small") warmFreeMemory(join(scratch, "warm.bin"), size);
          loads.push(loadavg()[0]!);
          const pinned = `timeout -k 10 ${limitSeconds} taskset -c ${run.cores.join(",")} bash -o pipefail -c ${q(run.command)}`;
          let result: { sample?: Sample; cores: number[]; error?: string };
          try {
            const { sample, stdout } = await timed(pinned, run.env, ep.serverPids);
            result = { sample, cores: run.cores, error: await run.check(stdout) };
          } catch (err) {
            result = { cores: run.cores, error: (err instanceof Error ? err.message : String(err)).split("\n").slice(-3).join(" / ").slice(0, 300) };
          }
          const key = `${w} ${n} ${tool.id}`;
          samples.set(key, [...(samples.get(key) ?? []), result]);
          const s = result.sample;
          log(`${key} (cores ${run.cores.join(",")}): ${s ? `${s.wall.toFixed(2)} s, client ${s.cpu.toFixed(2)} CPU-s, server ${s.serverCpu.toFixed(2)} CPU-s` : ""}${result.error ? ` FAILED ${result.error}` : ""}`);
        }
      }
    }
  }

  const lines: string[] = [];
  lines.push(`# bench:cores, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC`, "");
  const commit = spawnSync("git", ["-C", REPO_ROOT, "describe", "--always", "--dirty"], { encoding: "utf8" }).stdout?.trim() || "(not a git checkout)";
  const rcloneVersion = spawnSync(RCLONE_BIN, ["version"], { encoding: "utf8" }).stdout?.split("\n")[0] ?? "?";
  lines.push(
    `- Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, Linux ${release()}, Node ${process.version}; load average during the runs ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
    `- Server: ${ep.describe}`,
    `- Client cores: ${clientCores.join(",")}; s3x ${commit}: ${s3xMode}`,
    `- Floor: \`bench/floor/tls-ranged-get.cjs\`, WORKERS=N on N cores, ${floorConnections} connections, no writes (download only; checked by its byte count); floor-writes: the same with WRITE=FILE, every range written at its offset in 1 MiB writes as s3x does (checked by the file's hash)`,
    `- rclone: ${rcloneVersion}, on N cores, \`--transfers N --multi-thread-streams N\` (download), \`--s3-upload-concurrency N\` (upload), \`--checkers N\` (small); \`rclone cat\` is one stream whatever N`,
    `- Object: ${size.toLocaleString("en-US")} bytes; small: ${smallCount.toLocaleString("en-US")} × ${smallSize.toLocaleString("en-US")} bytes; ${runs} run(s) per cell, medians; files on ${scratch.startsWith("/dev/shm") ? "tmpfs (/dev/shm)" : tmpdir()}`,
    `- GB/s = 10⁹ bytes per wall second; client CPU-s per GiB = (user + system) / GiB moved; peak RSS of the client process (GNU time; all its threads); server CPU-s per run. **server-bound**: the server used ≥ 85 % of its cores over the run.`,
    "",
  );
  for (const w of workloads) {
    const bytes = w === "small" ? smallCount * smallSize : size;
    lines.push(`## ${w}: ${describeWorkload(w)}`, "", "| threads | client | cores | GB/s | client CPU-s/GiB | peak RSS MiB | server CPU-s | wall s (runs) | note |", "|---|---|---|---|---|---|---|---|---|");
    for (const n of counts) {
      for (const tool of tools) {
        const cell = samples.get(`${w} ${n} ${tool.id}`);
        if (!cell) continue;
        const good = cell.filter((c) => c.sample && !c.error).map((c) => c.sample!);
        const errors = cell.filter((c) => c.error).map((c) => c.error);
        if (good.length === 0) {
          lines.push(`| ${n} | ${tool.id} | ${cell[0]!.cores.join(",")} | — | — | — | — | — | FAILED: ${errors[0]} |`);
          continue;
        }
        const wall = median(good.map((s) => s.wall));
        const serverCpu = median(good.map((s) => s.serverCpu));
        const serverBound = ep.serverCores > 0 && ep.serverPids.length > 0 && serverCpu >= 0.85 * wall * ep.serverCores;
        const perSecond = w === "small" ? `${Math.round(smallCount / wall).toLocaleString("en-US")} objects/s` : "";
        const note = [perSecond, serverBound ? "**server-bound**" : "", errors.length ? `${errors.length} failed: ${errors[0]}` : ""].filter(Boolean).join("; ");
        const rate = bytes / wall / 1e9;
        lines.push(
          `| ${n} | ${tool.id} | ${cell[0]!.cores.join(",")} | ${rate.toFixed(rate < 0.1 ? 3 : 2)} | ${(median(good.map((s) => s.cpu)) / (bytes / GiB)).toFixed(2)} | ` +
            `${Math.round(median(good.map((s) => s.rssMiB)))} | ` +
            `${ep.serverPids.length ? serverCpu.toFixed(2) : "—"} | ${good.map((s) => s.wall.toFixed(2)).join(", ")} | ${note} |`,
        );
      }
    }
    lines.push("");
  }
  const text = lines.join("\n");
  process.stdout.write(`${text}\n`);
  const out = argText("out", join(REPO_ROOT, "bench", "results", `cores-${new Date().toISOString().slice(0, 10)}.md`));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${text}\n`);
  log(`written to ${out}`);
}

/**
 * Writes and deletes a file as large as the object right before a timed run,
 * as `npm run bench` does (bench/peers.ts): this VM hands memory freed for a
 * few seconds back to its host, and touching it again costs ~8 µs a page, so
 * without this a tool's CPU would depend on how long ago the last file went.
 */
function warmFreeMemory(path: string, bytes: number): void {
  const chunk = Buffer.alloc(8 << 20, 1);
  const fd = openSync(path, "w");
  try {
    for (let at = 0; at < bytes; at += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - at));
  } finally {
    closeSync(fd);
  }
  rmSync(path);
}

function describeWorkload(w: Workload): string {
  if (w === "download") return "one object to a file (the floor: to nowhere)";
  if (w === "stdout") return "one object to stdout, into `openssl dgst -sha256` on the same cores";
  if (w === "upload") return "a file on tmpfs to a new key";
  return "every small object under a prefix into a directory";
}

/** A presigned GET URL of `key` (the floor signs nothing itself). */
function presign(ep: CoresEndpoint, env: NodeJS.ProcessEnv, key: string): string {
  const r = spawnSync(process.execPath, [S3X_BIN, "presign", `s3://${ep.bucket}/${key}`, "--endpoint-url", ep.url], { env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`s3x presign failed: ${r.stderr}`);
  return r.stdout.trim();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
