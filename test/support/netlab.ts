/**
 * The network lab: an emulated fleet of S3 front-end hosts on one machine,
 * with a real kernel network and no mocks (../shared/BRIEF.md §4).
 *
 * A private network namespace (`unshare -n`) holds a radosgw listening on
 * several loopback addresses (127.0.0.2…), each address behind its own
 * `tc htb` class (its bandwidth, changeable live), `nft` rules that refuse,
 * black-hole, stall or reset its connections, and a DNS server answering
 * the endpoint's name with the addresses (changeable mid-test). The s3x
 * CLI under test runs inside the namespace too (`nsenter -n`), told the
 * DNS server with --dns-server. Nothing outside the namespace is touched;
 * when the lab process exits, the namespace and everything in it vanish.
 *
 * The test process itself cannot move into a namespace, so the inside is a
 * separate Node process (netlab-agent.ts) driven over IPC.
 *
 * Needs root, util-linux (unshare, nsenter), iproute2 (tc) and nftables
 * (installed on demand when missing, see debian-tools.ts). Tests call
 * `requireNetlab(this)`: when the lab still cannot run, the tests are skipped
 * with the reason, except under CI (process.env.CI), where that is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { S3X_BIN, type RunResult } from "./cli.js";
import { ensureDebianTools, NETLAB_TOOLS } from "./debian-tools.js";

export type Fault = "refuse" | "blackhole" | "stall" | "reset";

export interface LabSetup {
  /** The endpoint's host name, as the DNS server answers it. */
  hostName: string;
  /** Every address radosgw listens on, each with its own bandwidth class. */
  addresses: string[];
  /** The DNS answer at start; default: all addresses. */
  dnsAnswer?: string[];
  /** Bandwidth of each address in Mbit/s (50 MB/s = 400); 0: unshaped. */
  mbitPerAddress: number;
  /** radosgw's 'rgw max concurrent requests' (small: real 503 SlowDown). */
  maxConcurrentRequests?: number;
}

export interface LabInfo {
  port: number;
  dnsServer: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  serverPids: number[];
}

export interface AgentRequest {
  id: number;
  op: string;
  args?: unknown;
}

export type AgentReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

export interface LabRunOptions {
  stdin?: Buffer;
  timeoutMs?: number;
  onSpawn?: (child: ChildProcess) => void;
  /** Report the child's CPU seconds (user + system) in `cpuSeconds`. */
  measureCpu?: boolean;
}

export interface LabRunResult extends RunResult {
  wallSeconds: number;
  cpuSeconds?: number;
}

export interface NetLab extends LabInfo {
  hostName: string;
  addresses: string[];
  /** http://HOST:PORT: every request goes through s3x's own resolution. */
  endpoint: string;
  /** Runs `s3x ARGS… --endpoint-url … --dns-server …` inside the namespace. */
  s3x(args: string[], options?: LabRunOptions): Promise<LabRunResult>;
  setRate(address: string, megabytesPerSecond: number): Promise<void>;
  setFault(address: string, fault: Fault | null, afterBytes?: number): Promise<void>;
  setDnsAnswer(addresses: string[], ttlSeconds?: number): Promise<void>;
  createBucket(bucket: string): Promise<void>;
  objectHash(bucket: string, key: string): Promise<string>;
  openUploads(bucket: string): Promise<number>;
  /** An HTTP relay on `address` that answers every UploadPart with 503 SlowDown. */
  startSlowDownProxy(address: string): Promise<void>;
  close(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));
const AGENT = join(here, "netlab-agent.js");

/** Why the lab cannot run here, or undefined when it can. */
export function netlabUnavailable(): string | undefined {
  if (process.platform !== "linux") return "the network lab needs Linux network namespaces";
  if (process.getuid?.() !== 0) return "the network lab needs root (network namespaces, tc, nft)";
  // Installed on demand (as radosgw is), so a fresh machine's `npm test` runs the lab too.
  const missing = ensureDebianTools(NETLAB_TOOLS);
  if (missing) return `the network lab needs nftables, iproute2 and util-linux: ${missing}`;
  const probe = spawnSync("unshare", ["-n", "ip", "link", "set", "lo", "up"], { encoding: "utf8" });
  if (probe.status !== 0) return `cannot create a network namespace: ${probe.stderr.trim() || probe.error?.message}`;
  return undefined;
}

/**
 * Call in a `before` hook: skips the suite with the reason when the lab
 * cannot run here, but fails under CI, where a skipped lab would hide that
 * fan-out is untested.
 */
export function requireNetlab(context: Mocha.Context): void {
  const reason = netlabUnavailable();
  if (!reason) return;
  if (process.env.CI) throw new Error(`network lab unavailable under CI: ${reason}`);
  process.stderr.write(`      (skipped: ${reason})\n`);
  context.skip();
}

const MEGABYTE_IN_MBIT = 8;

export async function startNetlab(setup: LabSetup): Promise<NetLab> {
  // unshare execs node in place: the agent's pid is the namespace's holder, and IPC survives the exec.
  const agent = spawn("unshare", ["-n", "--", process.execPath, AGENT], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let exited = false;
  agent.on("message", (reply: AgentReply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (!waiter) return;
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(new Error(`network lab: ${reply.error}`));
  });
  agent.on("exit", (code, signal) => {
    exited = true;
    for (const waiter of pending.values()) waiter.reject(new Error(`network lab agent exited (${code ?? signal})`));
    pending.clear();
  });
  const call = <T>(op: string, args?: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(new Error("network lab agent is gone"));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      agent.send({ id, op, args } satisfies AgentRequest);
    });

  let info: LabInfo;
  try {
    info = await call<LabInfo>("setup", setup);
  } catch (err) {
    agent.kill("SIGKILL");
    throw err;
  }
  const pid = agent.pid!;
  const endpoint = `http://${setup.hostName}:${info.port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ACCESS_KEY_ID: info.accessKeyId,
    AWS_SECRET_ACCESS_KEY: info.secretAccessKey,
    AWS_REGION: info.region,
    AWS_CONFIG_FILE: "/nonexistent/s3x-test-config",
    AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/s3x-test-credentials",
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
  delete env.AWS_PROFILE;
  delete env.AWS_ENDPOINT_URL;
  delete env.AWS_ENDPOINT_URL_S3;

  return {
    ...info,
    hostName: setup.hostName,
    addresses: [...setup.addresses],
    endpoint,
    s3x: (args, options = {}) => runInNamespace(pid, [...args, "--endpoint-url", endpoint, "--dns-server", info.dnsServer], env, options),
    setRate: (address, megabytesPerSecond) => call("setRate", { address, mbit: megabytesPerSecond * MEGABYTE_IN_MBIT }),
    setFault: (address, fault, afterBytes = 2 * 1024 * 1024) => call("setFault", { address, fault, afterBytes }),
    setDnsAnswer: (addresses, ttl = 1) => call("setDns", { addresses, ttl }),
    createBucket: (bucket) => call("createBucket", { bucket }),
    objectHash: (bucket, key) => call<string>("objectHash", { bucket, key }),
    openUploads: (bucket) => call<number>("openUploads", { bucket }),
    startSlowDownProxy: (address) => call("startSlowDownProxy", { address }),
    async close() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => agent.once("exit", () => resolve()));
      await call("shutdown").catch(() => undefined);
      await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000).unref())]);
      if (!exited) agent.kill("SIGKILL");
    },
  };
}

/**
 * Runs s3x inside the lab's namespace. With measureCpu, a shell around it
 * reports the child's CPU time (`times`) on stderr's last line.
 */
function runInNamespace(pid: number, args: string[], env: NodeJS.ProcessEnv, options: LabRunOptions): Promise<LabRunResult> {
  const command = options.measureCpu
    ? ["bash", "-c", '"$@"; rc=$?; times >&2; exit $rc', "s3x", process.execPath, S3X_BIN, ...args]
    : [process.execPath, S3X_BIN, ...args];
  const started = performance.now();
  return new Promise<LabRunResult>((resolve, reject) => {
    const child = spawn("nsenter", ["-t", String(pid), "-n", "--", ...command], { env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 180_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const wallSeconds = (performance.now() - started) / 1000;
      let cpuSeconds: number | undefined;
      if (options.measureCpu) {
        // `times` prints two lines: the shell's own, then its children's "XmY.YYYs XmZ.ZZZs".
        const lines = err.trimEnd().split("\n");
        const children = lines.pop() ?? "";
        lines.pop();
        err = lines.join("\n") + (lines.length ? "\n" : "");
        cpuSeconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
      }
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err, wallSeconds, cpuSeconds });
    });
    child.stdin.on("error", () => undefined);
    if (options.onSpawn) options.onSpawn(child);
    else child.stdin.end(options.stdin);
  });
}
