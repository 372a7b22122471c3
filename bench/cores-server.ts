/**
 * The server side of `npm run bench:cores` (bench/cores.ts): the benchmark
 * server of ../shared/bench-cores (s3srv.go, virtual objects, never a
 * bottleneck where radosgw is one) built with Go and started on the cores it
 * is given, radosgw (`--radosgw`: the server `npm run bench` measures
 * against), or any endpoint the caller names (`--endpoint`).
 * Also the core lists both sides are pinned to.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { makeCertificate } from "../test/support/certificate.js";
import { ensureRadosgwInstalled, startRadosgw } from "../test/support/radosgw.js";
import { REPO_ROOT } from "./common.js";

/** Where the benchmark sends its requests, and what it knows of the server behind. */
export interface CoresEndpoint {
  url: string;
  /** The PEM file every client is told to trust ("" when the system's store will do). */
  caFile: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Processes whose CPU is the server's (/proc/PID/stat); empty when not known. */
  serverPids: number[];
  /** Cores the server may use; 0 when not known. */
  serverCores: number;
  /** The virtual-object server's binary (objects exist without uploads, `-sha256` names their hash); "" for another endpoint. */
  virtualServer: string;
  describe: string;
  stop(): Promise<void>;
}

/** "0", "1-3", "6-15", "0,2-3" → the core numbers, ascending. */
export function parseCores(text: string): number[] {
  const cores = new Set<number>();
  for (const piece of text.split(",")) {
    const match = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(piece);
    const first = Number(match?.[1]);
    const last = Number(match?.[2] ?? match?.[1]);
    if (!match || last < first) throw new Error(`cannot read the core list "${text}" (examples: 0, 1-3, 6-15, 0,2-3)`);
    for (let core = first; core <= last; core++) cores.add(core);
  }
  return [...cores].sort((a, b) => a - b);
}

/** Thread counts 1, 2, 4, … and the largest, `max` itself (10 cores: 1, 2, 4, 8, 10). */
export function threadCounts(max: number): number[] {
  const counts: number[] = [];
  for (let n = 1; n < max; n *= 2) counts.push(n);
  counts.push(max);
  return counts;
}

/** A TCP port nobody listens on now (the kernel's pick). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The built server: `--s3srv FILE` as given (a machine without Go), else a
 * build of `sourceDir` in the repository's ignored tmp/ (the shared folder is
 * read-only), redone when s3srv.go is newer; Go is installed with apt-get if
 * missing, as the peers of `npm run bench` are.
 */
export function buildBenchServer(sourceDir: string, prebuilt: string, log: (line: string) => void): string {
  if (prebuilt) return prebuilt;
  const outDir = join(REPO_ROOT, "tmp", "bench-cores");
  const binary = join(outDir, "s3srv");
  const source = join(sourceDir, "s3srv.go");
  if (!existsSync(source)) throw new Error(`no benchmark server source at ${source} (--server-source DIR, or --s3srv BINARY)`);
  if (existsSync(binary) && statSync(binary).mtimeMs >= statSync(source).mtimeMs) return binary;
  if (spawnSync("go", ["version"]).status !== 0) {
    log("installing Go with apt-get (golang-go) to build the benchmark server");
    const apt = spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "golang-go"], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (apt.status !== 0) throw new Error("cannot install golang-go (run as root, or give a built server with --s3srv)");
  }
  mkdirSync(outDir, { recursive: true });
  log(`building ${source} into ${binary}`);
  const build = spawnSync("go", ["build", "-o", binary, "."], {
    cwd: sourceDir,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, CGO_ENABLED: "0", GOCACHE: join(outDir, "go-cache"), GOPATH: join(outDir, "go") },
  });
  if (build.status !== 0) throw new Error(`go build of ${sourceDir} failed`);
  return binary;
}

/**
 * Starts the benchmark server pinned to `cores` (taskset, and GOMAXPROCS to
 * their count) with a throw-away certificate made in `dir`, on free ports;
 * resolves once it answers /__stats. `listedKeys`: the virtual objects its
 * listings show (rclone lists the parent before it reads one object).
 */
export async function startBenchServer(binary: string, cores: number[], dir: string, listedKeys: string[]): Promise<CoresEndpoint> {
  const cert = makeCertificate(dir, "s3srv");
  const [port, statsPort] = [await freePort(), await freePort()];
  const child = spawn(
    "taskset",
    ["-c", cores.join(","), binary, "-addr", `127.0.0.1:${port}`, "-http", `127.0.0.1:${statsPort}`, "-cert", cert.certFile, "-key", cert.keyFile, "-objects", listedKeys.join(",")],
    { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, GOMAXPROCS: String(cores.length) } },
  );
  // The server logs every 4xx; a HEAD of a key not there yet is how rclone starts an upload, not a failure.
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    for (const line of text.split(/\n|(?=\d{4}\/\d\d\/\d\d \d\d:)/)) {
      if (line.trim() && !/404 NoSuchKey: HEAD /.test(line)) process.stderr.write(`[s3srv] ${line.trim()}\n`);
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  for (let attempt = 0; ; attempt++) {
    if (gone) throw new Error(`the benchmark server ${binary} exited at start`);
    try {
      const stats = (await (await fetch(`http://127.0.0.1:${statsPort}/__stats`)).json()) as { gomaxprocs: number };
      if (stats.gomaxprocs !== cores.length) throw new Error(`the server runs with GOMAXPROCS ${stats.gomaxprocs}, not ${cores.length}`);
      break;
    } catch (err) {
      if (err instanceof Error && err.message.startsWith("the server runs")) throw err;
      if (attempt > 100) throw new Error(`the benchmark server did not answer on 127.0.0.1:${statsPort} in 10 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  // taskset execs the server: the child's PID is the server's (checked, since its CPU is read by PID).
  const pid = child.pid!;
  const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  if (comm !== "s3srv") throw new Error(`PID ${pid} is ${comm}, not the server`);
  return {
    url: `https://127.0.0.1:${port}`,
    caFile: cert.certFile,
    bucket: "bench",
    region: "us-east-1",
    accessKeyId: "bench",
    secretAccessKey: "bench-secret",
    serverPids: [pid],
    serverCores: cores.length,
    virtualServer: binary,
    describe: `the Go benchmark server (../shared/bench-cores/s3srv.go, virtual objects), HTTPS, on core(s) ${cores.join(",")}, GOMAXPROCS ${cores.length}`,
    stop: async () => {
      if (!gone) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * radosgw with its in-memory store over HTTPS (beast's own TLS, a throw-away
 * certificate made in `dir`), every daemon pinned to `cores` once started:
 * the server of `npm run bench`, so that a one-thread figure here (the floor
 * with writes beside s3x) compares with that benchmark's. `bytes`: what the
 * store must hold.
 */
export async function startRadosgwEndpoint(cores: number[], dir: string, bytes: number, log: (line: string) => void): Promise<CoresEndpoint> {
  ensureRadosgwInstalled(log);
  const cert = makeCertificate(dir, "radosgw");
  const server = await startRadosgw({ tls: cert, memstoreBytes: Math.max(8 * 1024 ** 3, 3 * bytes), log: (line) => log(`[radosgw] ${line}`) });
  const pids = server.pids();
  for (const pid of pids) {
    // -a: every thread of the daemon, not just its first.
    const r = spawnSync("taskset", ["-a", "-p", "-c", cores.join(","), String(pid)], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`taskset could not pin radosgw's PID ${pid} to core(s) ${cores.join(",")}: ${r.stderr.trim()}`);
  }
  return {
    url: server.tlsEndpoint!,
    caFile: cert.certFile,
    bucket: "bench-cores",
    region: server.region,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
    serverPids: pids,
    serverCores: cores.length,
    virtualServer: "",
    describe: `radosgw (in-memory store; beast's TLS; ceph-mon, ceph-osd and radosgw) on core(s) ${cores.join(",")}`,
    stop: () => server.stop(),
  };
}

/** Any endpoint (`--endpoint URL`, `--ca-file`, credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY). */
export function externalEndpoint(options: {
  url: string;
  caFile: string;
  bucket: string;
  region: string;
  serverPids: number[];
  serverCores: number;
}): CoresEndpoint {
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new Error("--endpoint needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment");
  const pids = options.serverPids.length > 0 ? `server CPU from PID(s) ${options.serverPids.join(",")}` : "server CPU not known (--server-pids)";
  return {
    ...options,
    accessKeyId,
    secretAccessKey,
    virtualServer: "",
    describe: `${options.url} (bucket ${options.bucket}; ${pids})`,
    stop: async () => {},
  };
}
