/**
 * Feeding a training job (issue #25): a prefix of shards streamed into one
 * consumer, s3x against what users run instead, over HTTPS and plain HTTP
 * in one run against the same local radosgw (memstore).
 *
 *   npm run bench:stream                      # 3 rounds, both transports (~15 min)
 *   npm run bench:stream -- --quick           # 1 round, 16 × 16 MiB and 2 × 256 MiB
 *   npm run bench:stream -- --slow-reader 0   # skip the slow-reader memory check
 *   npm run bench:stream -- --startup-only    # only the start-up table (1-byte cat, one process per shard)
 *   npm run bench:stream -- --rgw-nodelay     # radosgw with beast's tcp_nodelay=1 (see below)
 *
 * Workloads, each consumed by `sha256sum` (the stream's bytes are checked
 * against the objects' concatenation in key order; a wrong hash fails the cell):
 *  A. 64 × 16 MiB shards under one prefix
 *  B. 8 × 256 MiB shards under one prefix
 * Tools, interleaved in a new shuffled order every round:
 *  - s3x cat PREFIX/                (one process, objects fetched ahead within --max-memory)
 *  - s3x cat PREFIX/ --tar | tar -t (the same as a tar stream, listed by GNU tar)
 *  - aws s3 cp URL - in a loop      (the seeds' way: one aws-cli process per shard)
 *  - rclone cat PREFIX              (one process, objects one after another)
 *  - s3x cat --shard I/4, 4 workers at once (each hashes its shard; the wall time is the slowest)
 * s5cmd is not installable from the registries here (BRIEF.md §6): no column.
 * Also: time to the first byte (`| head -c 1`), and s3x's and rclone's peak
 * RSS while a reader takes 1 GiB at 10 MB/s (`--slow-reader MB/s`).
 *
 * Start-up (issue #39, point 8): a `cat` of a 1-byte object, as a data
 * loader's `pipe:` URL runs one per shard (median wall and CPU-seconds of
 * `--startup-runs` runs, against `node -e 0`, the floor of any Node program,
 * and rclone), and that pattern itself: 32 shards, one process each, one
 * after another into one hash. radosgw's default (beast without tcp_nodelay)
 * writes an answer's head and body apart under Nagle's algorithm: a small
 * body then waits for the client's delayed ACK, ~40 ms, on any connection
 * that has carried an exchange before (over TLS the handshake counts), for
 * every client. `--rgw-nodelay` measures the same against tcp_nodelay=1.
 *
 * Each cell: median wall seconds, MB/s, the client's CPU-seconds and peak
 * RSS (GNU time over the whole client side: the loop and its processes
 * for aws-cli). Markdown to stdout and bench/results/stream-<date>.md.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { makeCertificate } from "../test/support/certificate.js";
import { slowReaderScript } from "../test/support/slow-reader.js";
import type { RadosgwServer } from "../test/support/radosgw.js";
import { arg, createBucket, flag, median, REPO_ROOT, roundOrder, runBench, S3X_BIN, toolEnvironment } from "./common.js";

const MiB = 1024 * 1024;
const BUCKET = "stream";
const quick = flag("quick");
const rounds = arg("runs", quick ? 1 : 3);
const slowReaderMBps = arg("slow-reader", 10);
const startupOnly = flag("startup-only");
const startupRuns = arg("startup-runs", 15);
const rgwNoDelay = flag("rgw-nodelay");
/** Issue #39's bar for a one-object cat: wall and CPU seconds. */
const STARTUP_TARGET = { wall: 0.08, cpu: 0.06 };
const workloads = [
  { id: "A", prefix: "s16/", count: quick ? 16 : 64, size: 16 * MiB },
  { id: "B", prefix: "s256/", count: quick ? 2 : 8, size: 256 * MiB },
];

interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
  out: string;
  error?: string;
}

interface Transport {
  name: "https" | "http";
  endpoint: string;
  env: NodeJS.ProcessEnv;
  /** rclone's remote for this transport. */
  remote: string;
}

/** rclone 1.60 fails to start when AWS_CA_BUNDLE is set ("LoadCustomCABundleError"); it trusts SSL_CERT_FILE instead. */
const RCLONE = "env -u AWS_CA_BUNDLE rclone";

function q(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Runs a bash command (with a 900 s limit) after removing `timeFile`: its wall time, output and failure. */
function runBash(line: string, env: NodeJS.ProcessEnv, timeFile: string): { wall: number; out: string; stderr: string; error?: string } {
  rmSync(timeFile, { force: true });
  const started = process.hrtime.bigint();
  const res = spawnSync("timeout", ["-k", "10", "900", "bash", "-o", "pipefail", "-c", line], { env, encoding: "utf8", maxBuffer: 64 * MiB });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const error = res.status === 0 ? undefined : `exit ${res.status ?? res.signal}: ${res.stderr.trim().split("\n").slice(-2).join(" / ").slice(0, 300)}`;
  return { wall, out: res.stdout, stderr: res.stderr, error };
}

/** Runs a bash command; `{TIME}` marks what GNU time accounts to the client (with its children). */
function timed(command: string, env: NodeJS.ProcessEnv, timeFile: string): Sample {
  const { wall, out, stderr, error } = runBash(command.replaceAll("{TIME}", `/usr/bin/time -a -o ${q(timeFile)} -f "%U %S %M"`), env, timeFile);
  let cpu = 0;
  let rss = 0;
  try {
    // Several timed processes (4 workers) add their CPU; RSS is the largest.
    for (const row of readFileSync(timeFile, "utf8").trim().split("\n")) {
      const [user, sys, maxKb] = row.split(" ").map(Number);
      cpu += user + sys;
      rss = Math.max(rss, maxKb / 1024);
    }
  } catch {
    return { wall, cpu: NaN, rssMiB: NaN, out, error: `no GNU time output: ${stderr.trim().slice(-300)}` };
  }
  return { wall, cpu, rssMiB: rss, out, error };
}

/**
 * Runs `command` (bash) and reads its processes' CPU from bash's `times` (to
 * the millisecond), which the command must write to `timeFile`: GNU time
 * prints user and system time each cut down to 10 ms, ~10 ms too little for
 * a process that lives 50 ms, as `cat`'s start-up does.
 */
function timedPrecisely(command: string, env: NodeJS.ProcessEnv, timeFile: string): Sample {
  const { wall, out, stderr, error } = runBash(command, env, timeFile);
  let children = "";
  try {
    // `times`: the shell's own user and system time, then its children's, e.g. "0m0.041s 0m0.012s".
    children = readFileSync(timeFile, "utf8").trim().split("\n")[1] ?? "";
  } catch {
    // no output: reported below
  }
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(([, minutes, secs]) => Number(minutes) * 60 + Number(secs));
  if (seconds.length !== 2) return { wall, cpu: NaN, rssMiB: NaN, out, error: error ?? `no \`times\` output: ${stderr.trim().slice(-300)}` };
  return { wall, cpu: seconds[0]! + seconds[1]!, rssMiB: NaN, out, error };
}

/** The commands of each tool for one workload; each prints the consumer's output. */
function tools(t: Transport, w: (typeof workloads)[number], keys: string[]): { id: string; name: string; command: string; check: "sha" | "tar" | "shards" }[] {
  const x = `${q(process.execPath)} ${q(S3X_BIN)}`;
  const xo = `--endpoint-url ${t.endpoint} --no-progress`;
  const url = `s3://${BUCKET}/${w.prefix}`;
  const awsLoop = `for k in ${keys.map(q).join(" ")}; do /usr/bin/aws --endpoint-url ${t.endpoint} s3 cp s3://${BUCKET}/$k - || exit 1; done`;
  const workers = [0, 1, 2, 3].map((i) => `({TIME} ${x} cat ${url} --shard ${i}/4 ${xo} | sha256sum | sed 's/^/${i} /') &`).join(" ");
  return [
    { id: "s3x", name: "s3x cat", command: `{TIME} ${x} cat ${url} ${xo} | sha256sum`, check: "sha" },
    { id: "s3x-tar", name: "s3x cat --tar → tar -t", command: `{TIME} ${x} cat ${url} --tar ${xo} | tar -t | wc -l`, check: "tar" },
    { id: "aws-loop", name: "aws s3 cp URL - (loop)", command: `{TIME} bash -c ${q(awsLoop)} | sha256sum`, check: "sha" },
    { id: "rclone", name: "rclone cat", command: `{TIME} ${RCLONE} --config ${q(t.env.RCLONE_CONFIG ?? "")} cat ${t.remote}:${BUCKET}/${w.prefix} | sha256sum`, check: "sha" },
    { id: "s3x-4", name: "s3x cat --shard I/4, 4 workers", command: `${workers} wait`, check: "shards" },
  ];
}

async function main(server: RadosgwServer, dir: string, certFile: string): Promise<void> {
  const env = toolEnvironment();
  const home = join(dir, "home");
  await mkdir(join(home, ".config"), { recursive: true });
  Object.assign(env, {
    HOME: home,
    AWS_ACCESS_KEY_ID: server.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
    AWS_REGION: server.region,
    AWS_DEFAULT_REGION: server.region,
    AWS_CONFIG_FILE: join(dir, "aws.cfg"),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, "aws-credentials"),
    AWS_EC2_METADATA_DISABLED: "true",
    RCLONE_CONFIG: join(dir, "rclone.conf"),
    NO_PROXY: "127.0.0.1,localhost",
  });
  await writeFile(join(dir, "aws.cfg"), `[default]\nregion = ${server.region}\n`);
  await writeFile(join(dir, "aws-credentials"), "");
  const remote = (name: string, endpoint: string): string =>
    `[${name}]\ntype = s3\nprovider = Ceph\nenv_auth = false\naccess_key_id = ${server.accessKeyId}\nsecret_access_key = ${server.secretAccessKey}\nendpoint = ${endpoint}\nregion = ${server.region}\nforce_path_style = true\n`;
  await writeFile(join(dir, "rclone.conf"), `${remote("s3", server.endpoint)}\n${remote("s3tls", server.tlsEndpoint ?? "")}`);
  const transports: Transport[] = [
    // aws-cli and s3x trust the certificate through AWS_CA_BUNDLE, rclone (Go) through SSL_CERT_FILE.
    { name: "https", endpoint: server.tlsEndpoint!, env: { ...env, AWS_CA_BUNDLE: certFile, SSL_CERT_FILE: certFile }, remote: "s3tls" },
    { name: "http", endpoint: server.endpoint, env, remote: "s3" },
  ];

  await createBucket(server, BUCKET);
  const client = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });
  const expected = new Map<string, { sha: string; keys: string[]; bytes: number }>();
  for (const w of workloads) {
    // --startup-only needs 32 shards of A, nothing of B.
    if (startupOnly && w.id !== "A") continue;
    const count = startupOnly ? Math.min(w.count, 32) : w.count;
    const hash = createHash("sha256");
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      const key = `${w.prefix}shard-${String(i).padStart(4, "0")}.tar`;
      const body = randomBytes(w.size);
      hash.update(body);
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
      keys.push(key);
    }
    expected.set(w.id, { sha: hash.digest("hex"), keys, bytes: count * w.size });
    process.stderr.write(`uploaded ${count} × ${w.size / MiB} MiB under ${w.prefix}\n`);
  }

  const timeFile = join(dir, "time.txt");
  const rows: string[] = [];
  const loads: number[] = [];
  for (const t of startupOnly ? [] : transports) {
    for (const w of workloads) {
      const want = expected.get(w.id)!;
      const list = tools(t, w, want.keys);
      const samples = new Map<string, Sample[]>(list.map((tool) => [tool.id, []]));
      for (let round = 0; round < rounds; round++) {
        // A new order every round: no tool always runs right after the same one (common.ts, roundOrder).
        for (const tool of roundOrder(list, `${t.name} ${w.id}`, round)) {
          loads.push(loadavg()[0]!);
          const sample = timed(tool.command, t.env, timeFile);
          sample.error ??= verify(tool.check, sample.out, want.sha, w.count);
          samples.get(tool.id)!.push(sample);
          process.stderr.write(`${t.name} ${w.id} ${tool.id}: ${sample.wall.toFixed(2)} s${sample.error ? ` FAILED ${sample.error}` : ""}\n`);
        }
      }
      for (const tool of list) rows.push(row(t.name, w, want.bytes, tool.name, samples.get(tool.id)!));
    }
  }

  const startup = await startupRows(client, transports, timeFile, expected.get("A")!);
  client.destroy();

  const firstByte: string[] = [];
  for (const t of startupOnly ? [] : transports) {
    const w = workloads[0]!;
    const x = `${q(process.execPath)} ${q(S3X_BIN)}`;
    const candidates = [
      ["s3x cat", `${x} cat s3://${BUCKET}/${w.prefix} --endpoint-url ${t.endpoint} --no-progress`],
      ["aws s3 cp URL -", `/usr/bin/aws --endpoint-url ${t.endpoint} s3 cp s3://${BUCKET}/${expected.get(w.id)!.keys[0]} -`],
      ["rclone cat", `${RCLONE} --config ${q(t.env.RCLONE_CONFIG ?? "")} cat ${t.remote}:${BUCKET}/${w.prefix}`],
    ] as const;
    for (const [name, command] of candidates) {
      const firsts: number[] = [];
      const ends: number[] = [];
      for (let i = 0; i < Math.max(3, rounds); i++) {
        // The reader notes when its first byte came, then leaves: the pipeline ends when the writer has noticed.
        const s = timed(`{TIME} true; S=$(date +%s%N); ${command} | (head -c 1 >/dev/null; echo $(( $(date +%s%N) - S )))`, t.env, timeFile);
        firsts.push(Number(s.out.trim()) / 1e9);
        ends.push(s.wall);
      }
      firstByte.push(`| ${t.name} | ${name} | ${median(firsts).toFixed(2)} | ${median(ends).toFixed(2)} |`);
    }
  }

  const slow: string[] = [];
  if (slowReaderMBps > 0 && !startupOnly) {
    const t = transports[0]!;
    // 64 × 16 MiB: the issue's 1 GiB (107 s at 10 MB/s per tool).
    const w = workloads[0]!;
    const reader = `python3 -c ${q(slowReaderScript(slowReaderMBps))}`;
    const x = `${q(process.execPath)} ${q(S3X_BIN)}`;
    for (const [name, command] of [
      ["s3x cat --max-memory 256MiB", `{TIME} ${x} cat s3://${BUCKET}/${w.prefix} --max-memory 256MiB --endpoint-url ${t.endpoint} --no-progress | ${reader}`],
      ["rclone cat", `{TIME} ${RCLONE} --config ${q(t.env.RCLONE_CONFIG ?? "")} cat ${t.remote}:${BUCKET}/${w.prefix} | ${reader}`],
    ] as const) {
      const s = timed(command, t.env, timeFile);
      const ok = s.error ?? (s.out.trim().split(" ")[1] === expected.get(w.id)!.sha ? undefined : "wrong bytes");
      slow.push(`| ${t.name} | ${name} | ${(expected.get(w.id)!.bytes / MiB).toFixed(0)} MiB at ${slowReaderMBps} MB/s | ${s.wall.toFixed(1)} | ${s.rssMiB.toFixed(0)} |${ok ? ` FAILED: ${ok}` : ""}`);
      process.stderr.write(`slow reader ${name}: ${s.wall.toFixed(1)} s, ${s.rssMiB.toFixed(0)} MiB\n`);
    }
  }

  const commit = spawnSync("git", ["-C", REPO_ROOT, "describe", "--always", "--dirty"], { encoding: "utf8" }).stdout.trim();
  const rclone = spawnSync("rclone", ["version"], { encoding: "utf8" }).stdout.split("\n")[0];
  const aws = spawnSync("/usr/bin/aws", ["--version"], { encoding: "utf8" }).stdout.split(" ")[0];
  const text = [
    `## bench:stream, ${new Date().toISOString().slice(0, 16)} UTC, s3x ${commit}, ${aws}, ${rclone}`,
    "",
    `radosgw (memstore${rgwNoDelay ? ", beast tcp_nodelay=1" : ", beast defaults: Nagle on"}) on 127.0.0.1, client and server on the same 2 cores; medians of ${rounds} interleaved rounds; load average ${loads.length ? `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` : loadavg()[0]!.toFixed(1)}. Every stream hashed by sha256sum and checked (tar: the entry count). s5cmd is not installable here.`,
    "",
    ...(rows.length ? ["| transport | workload | tool | wall s | MB/s | client CPU-s | peak RSS MiB |", "|---|---|---|---|---|---|---|", ...rows, ""] : []),
    ...startup,
    ...(firstByte.length
      ? ["", "Time to the first byte (medians; process start included), and until the writer ended after its reader left (`| head -c 1`):", "", "| transport | tool | first byte s | writer gone s |", "|---|---|---|---|", ...firstByte]
      : []),
    ...(slow.length ? ["", "A slow reader (Python, rate-limited): peak RSS of the client", "", "| transport | tool | stream | wall s | peak RSS MiB |", "|---|---|---|---|---|", ...slow] : []),
    "",
  ].join("\n");
  process.stdout.write(text);
  const out = join(REPO_ROOT, "bench", "results", `stream-${new Date().toISOString().slice(0, 10)}.md`);
  if (!quick && !startupOnly) await writeFile(out, text);
}

/** Whether a start-up row meets STARTUP_TARGET, and if not which half misses. */
function barVerdict(wall: number, cpu: number): string {
  const missed = [wall > STARTUP_TARGET.wall ? "wall" : "", cpu > STARTUP_TARGET.cpu ? "CPU" : ""].filter(Boolean);
  return missed.length === 0 ? "meets the bar" : `misses the bar: ${missed.join(" and ")}`;
}

/**
 * Start-up: a 1-byte object through `cat` (median of startupRuns, interleaved
 * with the other tools), and 32 shards of workload A read by one process
 * each, one after another into one sha256sum, as a data loader's `pipe:`
 * URLs do. Markdown lines.
 */
async function startupRows(client: S3Client, transports: Transport[], timeFile: string, shards: { keys: string[] }): Promise<string[]> {
  const sessionDir = mkdtempSync(join(tmpdir(), "s3x-stream-tls-sessions-"));
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "one-byte", Body: "x" }));
  const x = `${q(process.execPath)} ${q(S3X_BIN)}`;
  const lines = [
    "Start-up: `cat` of a 1-byte object (median of " + startupRuns + " interleaved runs; the bar is " + STARTUP_TARGET.wall + " s wall and " + STARTUP_TARGET.cpu + " CPU-s; CPU from bash's `times`, to the millisecond), and the `pipe:` pattern: " + Math.min(32, shards.keys.length) + " shards of 16 MiB, one process each, one after another into one sha256sum" +
      (rgwNoDelay ? ":" : ". Over HTTPS, radosgw's Nagle holds back a small answer's body until the client's delayed ACK (~40 ms; after a TLS handshake the client's kernel delays its ACKs, and Node cannot set TCP_QUICKACK), for every client: `--rgw-nodelay` measures without it."),
    "",
    `| transport | tool | 1-byte wall s | 1-byte CPU-s | ${Math.min(32, shards.keys.length)} processes wall s | ${Math.min(32, shards.keys.length)} processes CPU-s |`,
    "|---|---|---|---|---|---|",
  ];
  const keys = shards.keys.slice(0, 32);
  const hash = createHash("sha256");
  const expectedSha = await (async () => {
    for (const key of keys) {
      const out = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      hash.update(await out.Body!.transformToByteArray());
    }
    return hash.digest("hex");
  })();
  for (const t of transports) {
    const rclone = `${RCLONE} --config ${q(t.env.RCLONE_CONFIG ?? "")} cat`;
    // s3x keeps TLS sessions between runs (net/tls-session-store.ts): here in a directory of the bench's own, and once without.
    const kept = `env S3X_TLS_SESSION_CACHE=${q(sessionDir)} ${x}`;
    const notKept = `env S3X_TLS_SESSION_CACHE=off ${x}`;
    const tools = [
      { name: "node -e 0 (floor)", one: "node -e 0", shard: undefined },
      { name: "s3x cat", one: `${kept} cat s3://${BUCKET}/one-byte --endpoint-url ${t.endpoint}`, shard: (key: string) => `${kept} cat s3://${BUCKET}/${key} --endpoint-url ${t.endpoint}` },
      ...(t.name === "https"
        ? [{ name: "s3x cat, no kept TLS session", one: `${notKept} cat s3://${BUCKET}/one-byte --endpoint-url ${t.endpoint}`, shard: (key: string) => `${notKept} cat s3://${BUCKET}/${key} --endpoint-url ${t.endpoint}` }]
        : []),
      { name: "rclone cat", one: `${rclone} ${t.remote}:${BUCKET}/one-byte`, shard: (key: string) => `${rclone} ${t.remote}:${BUCKET}/${key}` },
    ];
    const samples = new Map(tools.map((tool) => [tool.name, [] as Sample[]]));
    for (let round = 0; round < startupRuns; round++) {
      for (const tool of roundOrder(tools.map((tool) => ({ ...tool, id: tool.name })), `startup ${t.name}`, round)) {
        const sample = timedPrecisely(`${tool.one} > /dev/null; times > ${q(timeFile)}`, t.env, timeFile);
        if (sample.error) throw new Error(`${tool.name}: ${sample.error}`);
        samples.get(tool.name)!.push(sample);
      }
    }
    for (const tool of tools) {
      const one = samples.get(tool.name)!;
      let loop = "| |";
      if (tool.shard) {
        const command = keys.map((key) => tool.shard!(key)).join(" && ");
        const s = timedPrecisely(`{ ${command} && times > ${q(timeFile)}; } | sha256sum`, t.env, timeFile);
        const wrong = s.error ?? (s.out.split(" ")[0] === expectedSha ? undefined : "wrong bytes");
        loop = wrong ? `failed: ${wrong} | |` : `${s.wall.toFixed(2)} | ${s.cpu.toFixed(2)} |`;
      }
      const wall = median(one.map((s) => s.wall));
      const cpu = median(one.map((s) => s.cpu));
      const bar = tool.name === "s3x cat" ? ` (${barVerdict(wall, cpu)})` : "";
      lines.push(`| ${t.name} | ${tool.name}${bar} | ${wall.toFixed(3)} | ${cpu.toFixed(3)} | ${loop}`);
      process.stderr.write(`startup ${t.name} ${tool.name}: ${wall.toFixed(3)} s, ${cpu.toFixed(3)} CPU-s\n`);
    }
  }
  rmSync(sessionDir, { recursive: true, force: true });
  return lines;
}

function verify(check: "sha" | "tar" | "shards", out: string, sha: string, count: number): string | undefined {
  if (check === "sha") return out.split(" ")[0] === sha ? undefined : `sha256 ${out.slice(0, 16)}… is not the objects' ${sha.slice(0, 16)}…`;
  if (check === "tar") return Number(out.trim()) === count ? undefined : `tar listed ${out.trim()} entries, not ${count}`;
  // 4 workers: each printed "I HASH -"; together they must have run and printed 4 hashes (shard contents are checked by the tests).
  const lines = out.trim().split("\n").filter(Boolean);
  return lines.length === 4 && lines.every((line) => /^[0-3] [0-9a-f]{64} /.test(line)) ? undefined : `4 workers printed ${lines.length} hashes`;
}

function row(transport: string, w: (typeof workloads)[number], bytes: number, tool: string, samples: Sample[]): string {
  const failed = samples.find((s) => s.error);
  const label = `${w.count} × ${w.size / MiB} MiB`;
  if (failed) return `| ${transport} | ${label} | ${tool} | failed: ${failed.error} | | | |`;
  const wall = median(samples.map((s) => s.wall));
  return `| ${transport} | ${label} | ${tool} | ${wall.toFixed(2)} | ${(bytes / 1e6 / wall).toFixed(0)} | ${median(samples.map((s) => s.cpu)).toFixed(2)} | ${median(samples.map((s) => s.rssMiB)).toFixed(0)} |`;
}

const certificate = makeCertificate(mkdtempSync(join(tmpdir(), "s3x-stream-tls-")));
runBench((server, dir) => main(server, dir, certificate.certFile), { tls: certificate, memstoreBytes: 8 * 1024 * MiB, tcpNoDelay: rgwNoDelay, log: (l) => process.stderr.write(`[radosgw] ${l}\n`) });
