/**
 * s3x side by side with the tools users would pick instead (issue 4): the
 * AWS CLI (classic and with the CRT), the AWS CRT itself (awscrt from Python),
 * rclone, s3cmd and the Node AWS SDK (lib-storage), all against the same local
 * radosgw (memstore) in one run.
 *
 *   npm run bench                         # full: 1 GiB, 2,000 × 64 KiB, 10,000 keys, 3 runs (~20 min)
 *   npm run bench -- --quick              # ~2 min: 128 MiB, 200 files, 1,000 keys, 1 run
 *   npm run bench -- --runs 5 --size 512 --files 1000 --keys 5000
 *   npm run bench -- --quick --tools s3x,crt,rclone --workloads 1,2,9
 *   npm run bench -- --transports https   # HTTPS only (default: https,http)
 *   npm run bench -- --quick --runs 5 --tools s3x,s3x-b --compare /tmp/before
 *                       # A/B: s3x against another build (a checkout with bin/ and dist/ built), interleaved
 *
 * Every workload runs over HTTPS and over plain HTTP in the same run, the
 * two interleaved like the tools: radosgw's beast frontend serves both, TLS
 * with a throw-away certificate the benchmark makes, and every tool is told
 * to trust it the way its users would (AWS_CA_BUNDLE for aws-cli and s3x,
 * SSL_CERT_FILE for rclone, s3cmd ca_certs_file, a trust store for the CRT, an https
 * agent for the Node SDK). HTTPS comes first: it is how users reach S3.
 *
 * Nine workloads: (1) upload a file, (2) download to a file, (3) download to
 * stdout into `openssl dgst -sha256`, (4) upload from stdin, (5) upload
 * 2,000 × 64 KiB files recursively, (6) download them, (7) list 10,000 keys,
 * (8) no-op sync of the 2,000 files, (9) S3 → S3 copy of the big object,
 * (10) 20 × 16 MiB shards streamed one process per shard (`pipe:` URLs of
 * WebDataset and friends), where start-up counts as much as throughput.
 * Within a workload the tools run interleaved, in a new shuffled order every
 * round (roundOrder: no tool always runs right after the same one, whose
 * leftovers on the server — deferred garbage collection of a 1 GiB object it
 * overwrote or deleted — it would always pay for); every run is
 * checked — sha256 of files and streams, uploads read back with curl (its own
 * SigV4 signer) or compared by ETag = MD5 — and a wrong answer fails the
 * cell instead of counting. Each cell reports the median wall time, the rate,
 * the client's CPU-seconds and peak RSS (GNU time) and the server's
 * CPU-seconds (/proc/PID/stat of ceph-mon, ceph-osd and radosgw).
 *
 * Peers are installed with apt-get when missing (as root); their
 * configuration lives in a scratch directory (HOME points there too), never
 * in ~/.aws, ~/.config/rclone or ~/.s3cfg, and names only the local endpoint.
 * The Markdown table goes to stdout and to bench/results/<YYYY-MM-DD>.md
 * (with --quick: a file in the temp directory, unless --out FILE).
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { mkdir, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type _Object,
} from "@aws-sdk/client-s3";
import { makeCertificate } from "../test/support/certificate.js";
import type { RadosgwServer } from "../test/support/radosgw.js";
import { arg, argText, flag, median, REPO_ROOT, roundOrder, runBench, S3X_BIN, serverCpuSeconds, toolEnvironment } from "./common.js";

// The SDK (used here for set-up and checks) warns on every client that future releases need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const BUCKET = "bench";

const quick = flag("quick");
const runs = arg("runs", quick ? 1 : 3);
const bigSize = arg("size", quick ? 128 : 1024) * MiB;
const files = arg("files", quick ? 200 : 2000);
const fileSize = 64 * 1024;
const keys = arg("keys", quick ? 1000 : 10_000);
/** Workload 10: shards streamed one process each, as WebDataset's `pipe:` URLs run them. */
const shards = arg("shards", 20);
const shardSize = arg("shard-size", quick ? 4 : 16) * MiB;
const onlyTools = argText("tools", "").split(",").filter(Boolean);
/** Another build of s3x (a checkout directory, built) to run as variant "s3x-b", for A/B of a change. */
const compareBuild = argText("compare", "");
const onlyWorkloads = argText("workloads", "").split(",").filter(Boolean).map(Number);
/** Seconds one command may take before it is killed and its cell fails. */
const limitSeconds = arg("timeout", quick ? 120 : 300);
const transports = argText("transports", "https,http").split(",").filter(Boolean) as Transport[];
for (const t of transports) if (t !== "https" && t !== "http") throw new Error(`--transports: https or http, got ${t}`);

/** How tools reach the server; every variant exists once per transport. */
type Transport = "https" | "http";
/** Variant ids end in this for HTTPS ("s3x-tls"); plain-HTTP ids are bare, as before. */
const TLS_SUFFIX = "-tls";
const transportOf = (id: string): Transport => (id.endsWith(TLS_SUFFIX) ? "https" : "http");
const baseId = (id: string): string => (id.endsWith(TLS_SUFFIX) ? id.slice(0, -TLS_SUFFIX.length) : id);
/** The HTTPS endpoint and the certificate every tool is told to trust. */
interface TlsSetup {
  endpoint: string;
  certFile: string;
  /** Whether radosgw also serves TLS on 443 (the CRT dials 443 with TLS on, whatever the port). */
  port443: boolean;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Single-quotes a word for bash. */
function q(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function sizeText(bytes: number): string {
  if (bytes % GiB === 0) return `${bytes / GiB} GiB`;
  if (bytes % MiB === 0) return `${bytes / MiB} MiB`;
  return `${bytes / 1024} KiB`;
}

const fmt = (n: number, digits = 2): string => n.toFixed(digits);
const thousands = (n: number): string => n.toLocaleString("en-US");

// ---------------------------------------------------------------------------
// Peers

/**
 * What a tool runs for each operation: one shell command (the program and
 * its arguments, no redirections). Missing = the tool cannot do it.
 * Prefixes end in "/".
 */
interface Ops {
  upFile?: (file: string, key: string) => string;
  downFile?: (key: string, file: string) => string;
  downStdout?: (key: string) => string;
  upStdin?: (key: string) => string;
  upDir?: (dir: string, prefix: string) => string;
  downDir?: (prefix: string, dir: string) => string;
  list?: (prefix: string) => string;
  sync?: (dir: string, prefix: string) => string;
  copy?: (srcKey: string, dstKey: string) => string;
}
type OpName = keyof Ops;

interface Variant {
  /** Short name, also used in object keys. */
  id: string;
  name: string;
  /** The settings, in words, for the results file. */
  settings: string;
  version: string;
  env: NodeJS.ProcessEnv;
  ops: Ops;
  /** Why the tool cannot run at all (not installed, port 80 taken). */
  skip?: string;
  /** Why an operation the tool lacks is not run (default: not supported). */
  why?: Partial<Record<OpName, string>>;
}

/** The AWS CRT S3 client from Python (Debian python3-awscrt), driven by a small script. */
const CRT_SCRIPT = String.raw`# Written by bench/peers.ts: the AWS CRT S3 client (awscrt.s3.S3Client) doing
# one benchmark operation. Settings from the environment: CRT_HOSTPORT (the
# endpoint, TLS off), AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
# CRT_GBPS (throughput target, 0 = the CRT's default), CRT_PART_SIZE (0 = default),
# CRT_CA_FILE (TLS on, trusting this certificate; the CRT then dials port 443).
import os, sys, threading, xml.etree.ElementTree as ET
from urllib.parse import quote
from awscrt.io import ClientBootstrap, ClientTlsContext, DefaultHostResolver, EventLoopGroup, TlsContextOptions
from awscrt.auth import AwsCredentialsProvider
from awscrt.http import HttpHeaders, HttpRequest
from awscrt.s3 import S3Client, S3RequestType, S3RequestTlsMode

hostport = os.environ["CRT_HOSTPORT"]
gbps = float(os.environ.get("CRT_GBPS", "0"))
part = int(os.environ.get("CRT_PART_SIZE", "0"))
elg = EventLoopGroup()
bootstrap = ClientBootstrap(elg, DefaultHostResolver(elg))
creds = AwsCredentialsProvider.new_static(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
ca = os.environ.get("CRT_CA_FILE")
tls = {"tls_mode": S3RequestTlsMode.DISABLED}
if ca:
    tls_options = TlsContextOptions()
    tls_options.override_default_trust_store_from_path(ca_filepath=ca)
    connection = ClientTlsContext(tls_options).new_connection_options()
    connection.set_server_name(hostport.split(":")[0])
    tls = {"tls_mode": S3RequestTlsMode.ENABLED, "tls_connection_options": connection}
client = S3Client(bootstrap=bootstrap, region=os.environ["AWS_REGION"], credential_provider=creds,
                  part_size=part or None, throughput_target_gbps=gbps or None, **tls)

def path(bucket, key=""):
    return "/" + bucket + "/" + quote(key, safe="/~")

def request(method, p, rtype=S3RequestType.DEFAULT, headers=(), send=None, recv=None, on_body=None):
    req = HttpRequest(method, p, HttpHeaders([("Host", hostport)] + list(headers)))
    done, result, chunks = threading.Event(), {}, []
    def on_done(error=None, error_headers=None, error_body=None, **kw):
        result["error"], result["body"] = error, error_body
        done.set()
    if on_body is None and recv is None:
        on_body = lambda chunk, offset, **kw: chunks.append(bytes(chunk))
    s = client.make_request(request=req, type=rtype, send_filepath=send, recv_filepath=recv,
                            on_body=on_body, on_done=on_done)
    return s, done, result, chunks

def wait_all(reqs):
    for r in reqs:
        r[1].wait()
    for r in reqs:
        if r[2]["error"] is not None:
            raise SystemExit("crt: %s %s" % (r[2]["error"], (r[2]["body"] or b"")[:300]))

def put_file(bucket, key, f):
    return request("PUT", path(bucket, key), S3RequestType.PUT_OBJECT,
                   [("Content-Length", str(os.path.getsize(f))), ("Content-Type", "application/octet-stream")], send=f)

def list_keys(bucket, prefix):
    keys, token = [], None
    while True:
        q = "?list-type=2&prefix=" + quote(prefix, safe="")
        if token:
            q += "&continuation-token=" + quote(token, safe="")
        r = request("GET", path(bucket) + q)
        wait_all([r])
        root = ET.fromstring(b"".join(r[3]))
        ns = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
        for c in root.findall(ns + "Contents"):
            keys.append((c.find(ns + "Key").text, int(c.find(ns + "Size").text)))
        if root.findtext(ns + "IsTruncated") != "true":
            return keys
        token = root.findtext(ns + "NextContinuationToken")

op, a = sys.argv[1], sys.argv[2:]
if op == "put":  # put FILE BUCKET KEY
    wait_all([put_file(a[1], a[2], a[0])])
elif op == "get":  # get BUCKET KEY FILE|-
    if a[2] == "-":
        out, pos = sys.stdout.buffer, [0]
        def write(chunk, offset, **kw):
            if offset != pos[0]:
                raise RuntimeError("out of order body at %d, expected %d" % (offset, pos[0]))
            out.write(chunk)
            pos[0] += len(chunk)
        wait_all([request("GET", path(a[0], a[1]), S3RequestType.GET_OBJECT, on_body=write)])
        out.flush()
    else:
        wait_all([request("GET", path(a[0], a[1]), S3RequestType.GET_OBJECT, recv=a[2])])
elif op == "put-dir":  # put-dir DIR BUCKET PREFIX
    wait_all([put_file(a[1], a[2] + n, os.path.join(a[0], n)) for n in sorted(os.listdir(a[0]))])
elif op == "get-dir":  # get-dir BUCKET PREFIX DIR
    os.makedirs(a[2], exist_ok=True)
    wait_all([request("GET", path(a[0], k), S3RequestType.GET_OBJECT, recv=os.path.join(a[2], k[len(a[1]):]))
              for k, _ in list_keys(a[0], a[1])])
elif op == "ls":  # ls BUCKET PREFIX
    sys.stdout.write("".join("%d %s\n" % (size, k) for k, size in list_keys(a[0], a[1])))
elif op == "copy":  # copy BUCKET KEY BUCKET2 KEY2 (one CopyObject)
    wait_all([request("PUT", path(a[2], a[3]), headers=[
        ("x-amz-copy-source", quote("/" + a[0] + "/" + a[1], safe="/~")), ("Content-Length", "0")])])
else:
    raise SystemExit("crt: unknown operation " + op)
`;

/** The Node AWS SDK v3 (lib-storage Upload, GetObject, PutObject, ListObjectsV2, CopyObject). */
const SDK_SCRIPT = String.raw`// Written by bench/peers.ts: the AWS SDK for JavaScript v3 doing one benchmark
// operation, loaded from the s3x checkout (S3X_BENCH_ROOT). Settings from the
// environment: SDK_ENDPOINT, AWS_REGION, credentials, SDK_PART_SIZE and
// SDK_QUEUE (lib-storage Upload), SDK_CONCURRENCY (objects in flight for
// many files), SDK_CA_FILE (a certificate to trust for https, through an agent:
// NODE_EXTRA_CA_CERTS would cost every start ~80 ms).
import { createRequire } from "node:module";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
const require = createRequire(path.join(process.env.S3X_BENCH_ROOT, "package.json"));
const { S3Client, GetObjectCommand, PutObjectCommand, CopyObjectCommand, ListObjectsV2Command } = require("@aws-sdk/client-s3");
const { Upload } = require("@aws-sdk/lib-storage");
const { NodeHttpHandler } = require("@smithy/node-http-handler");
const https = require("node:https");

const partSize = Number(process.env.SDK_PART_SIZE || 5 * 1024 * 1024);
const queueSize = Number(process.env.SDK_QUEUE || 4);
const concurrency = Number(process.env.SDK_CONCURRENCY || 16);
// radosgw (like most S3-compatible servers) rejects the SDK's default
// aws-chunked uploads with checksum trailers: checksums only when required.
const client = new S3Client({
  endpoint: process.env.SDK_ENDPOINT, region: process.env.AWS_REGION, forcePathStyle: true,
  requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED",
  ...(process.env.SDK_CA_FILE
    ? { requestHandler: new NodeHttpHandler({ httpsAgent: new https.Agent({ ca: fs.readFileSync(process.env.SDK_CA_FILE), keepAlive: true }) }) }
    : {}),
});

async function pool(items, n, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

async function listAll(Bucket, Prefix) {
  const out = [];
  let ContinuationToken;
  do {
    const r = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }));
    out.push(...(r.Contents || []));
    ContinuationToken = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (ContinuationToken);
  return out;
}

const [op, ...a] = process.argv.slice(2);
switch (op) {
  case "put": // put FILE BUCKET KEY
    await new Upload({ client, params: { Bucket: a[1], Key: a[2], Body: fs.createReadStream(a[0]) }, partSize, queueSize }).done();
    break;
  case "put-stdin": // put-stdin BUCKET KEY
    await new Upload({ client, params: { Bucket: a[0], Key: a[1], Body: process.stdin }, partSize, queueSize }).done();
    break;
  case "get": { // get BUCKET KEY FILE|-
    const r = await client.send(new GetObjectCommand({ Bucket: a[0], Key: a[1] }));
    if (a[2] === "-") await pipeline(r.Body, process.stdout, { end: false });
    else await pipeline(r.Body, fs.createWriteStream(a[2]));
    break;
  }
  case "put-dir": { // put-dir DIR BUCKET PREFIX
    const names = (await fsp.readdir(a[0])).sort();
    await pool(names, concurrency, async (name) => {
      const Body = await fsp.readFile(path.join(a[0], name));
      await client.send(new PutObjectCommand({ Bucket: a[1], Key: a[2] + name, Body }));
    });
    break;
  }
  case "get-dir": { // get-dir BUCKET PREFIX DIR
    await fsp.mkdir(a[2], { recursive: true });
    await pool(await listAll(a[0], a[1]), concurrency, async (o) => {
      const r = await client.send(new GetObjectCommand({ Bucket: a[0], Key: o.Key }));
      await pipeline(r.Body, fs.createWriteStream(path.join(a[2], o.Key.slice(a[1].length))));
    });
    break;
  }
  case "ls": // ls BUCKET PREFIX
    process.stdout.write((await listAll(a[0], a[1])).map((o) => o.Size + " " + o.Key + "\n").join(""));
    break;
  case "copy": // copy BUCKET KEY BUCKET2 KEY2
    await client.send(new CopyObjectCommand({ Bucket: a[2], Key: a[3], CopySource: a[0] + "/" + encodeURIComponent(a[1]) }));
    break;
  default:
    throw new Error("sdk: unknown operation " + op);
}
client.destroy();
`;

function firstLine(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: "utf8" });
  return `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n")[0] ?? "";
}

function debVersion(pkg: string): string {
  return spawnSync("dpkg-query", ["-W", "-f=${Version}", pkg], { encoding: "utf8" }).stdout?.trim() || "?";
}

function hasAwscrt(): boolean {
  return existsSync("/usr/bin/python3") && spawnSync("/usr/bin/python3", ["-c", "import awscrt.s3"]).status === 0;
}

/** Installs the Debian peers that are missing (root only; apt-get update once if the first try fails). */
function installPeers(): string[] {
  const wanted: [string, () => boolean][] = [
    ["awscli", () => existsSync("/usr/bin/aws")],
    ["python3-awscrt", hasAwscrt],
    ["rclone", () => existsSync("/usr/bin/rclone")],
    ["s3cmd", () => existsSync("/usr/bin/s3cmd")],
  ];
  const missing = wanted.filter(([, present]) => !present()).map(([pkg]) => pkg);
  if (missing.length === 0) return [];
  if (process.getuid?.() !== 0) {
    log(`peers not installed (not root, so not installing): ${missing.join(", ")}`);
    return missing;
  }
  log(`installing peers with apt-get: ${missing.join(", ")}`);
  const install = () =>
    spawnSync("apt-get", ["install", "-y", "--no-install-recommends", ...missing], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    }).status === 0;
  if (!install()) {
    spawnSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"] });
    install();
  }
  return wanted.filter(([, present]) => !present()).map(([pkg]) => pkg);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * What TLS itself costs here: AES-GCM throughput of one core (openssl speed,
 * 16 KiB blocks, as TLS records are), as CPU-seconds per GiB. An HTTPS
 * transfer pays it once at each end, so it is the floor under a client's
 * CPU per GiB over TLS.
 */
function tlsFloor(): string {
  return (["aes-128-gcm", "aes-256-gcm"] as const)
    .map((cipher) => {
      const r = spawnSync("openssl", ["speed", "-seconds", "2", "-bytes", "16384", "-evp", cipher], { encoding: "utf8" });
      // Last line: "AES-128-GCM   123456.78k" (thousands of bytes per second).
      const line = (r.stdout ?? "").trim().split("\n").pop() ?? "";
      const k = Number(/([\d.]+)k\s*$/.exec(line)?.[1]);
      if (!Number.isFinite(k) || k <= 0) return `${cipher}: not measured (${(r.stderr ?? "").trim().split("\n")[0] ?? "no output"})`;
      const bytesPerSecond = k * 1000;
      return `${cipher.toUpperCase()} ${fmt(bytesPerSecond / 1e6, 0)} MB/s = ${fmt(GiB / bytesPerSecond, 2)} CPU-s per GiB`;
    })
    .join("; ");
}

function makeVariants(server: RadosgwServer, work: string, notInstalled: string[], crtPort: boolean, tls?: TlsSetup): Variant[] {
  const ep = tls?.endpoint ?? server.endpoint;
  const hostport = new URL(ep).host;
  const home = join(work, "home");
  const env = toolEnvironment();
  // aws-cli and s3x read the CA bundle from here, as users set it.
  if (tls) env.AWS_CA_BUNDLE = tls.certFile;
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    AWS_ACCESS_KEY_ID: server.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
    AWS_REGION: server.region,
    AWS_DEFAULT_REGION: server.region,
    AWS_CONFIG_FILE: join(work, "aws-default.cfg"),
    AWS_SHARED_CREDENTIALS_FILE: join(work, "aws-credentials"),
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_PAGER: "",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  });
  const s3 = (key: string) => q(`s3://${BUCKET}/${key}`);
  const missing = (pkg: string) => (notInstalled.includes(pkg) ? `${pkg} not installed` : undefined);
  const needs80 = tls
    ? tls.port443
      ? undefined
      : "port 443 is in use (the Debian CRT build dials port 443 with TLS on)"
    : crtPort
      ? undefined
      : "port 80 is in use (the Debian CRT build dials port 80 with TLS off)";

  // s3x
  const x = `${q(process.execPath)} ${q(S3X_BIN)}`;
  const xo = `--endpoint-url ${ep} --no-progress --quiet`;
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
  const commit = spawnSync("git", ["-C", REPO_ROOT, "describe", "--always", "--dirty"], { encoding: "utf8" }).stdout?.trim();
  const s3x: Variant = {
    id: "s3x",
    name: "**s3x**",
    settings: "defaults (concurrency 25, 8 MiB parts)",
    version: `${pkg.version}${commit ? ` (${commit})` : ""}`,
    env,
    ops: {
      upFile: (f, k) => `${x} cp ${q(f)} ${s3(k)} ${xo}`,
      downFile: (k, f) => `${x} cp ${s3(k)} ${q(f)} ${xo}`,
      downStdout: (k) => `${x} cp ${s3(k)} - ${xo}`,
      upStdin: (k) => `${x} cp - ${s3(k)} ${xo}`,
      upDir: (d, p) => `${x} cp --recursive ${q(d)} ${s3(p)} ${xo}`,
      downDir: (p, d) => `${x} cp --recursive ${s3(p)} ${q(d)} ${xo}`,
      list: (p) => `${x} ls --recursive ${s3(p)} --endpoint-url ${ep}`,
      sync: (d, p) => `${x} sync ${q(d)} ${s3(p)} ${xo}`,
      copy: (a, b) => `${x} cp ${s3(a)} ${s3(b)} ${xo}`,
    },
  };
  // Tuned as the CRT works: no SHA-256 of upload bodies over plain HTTP.
  // Only the uploads differ from the defaults.
  const unsigned = `--payload-signing never`;
  const s3xTuned: Variant = {
    id: "s3x-tuned",
    name: "**s3x** tuned",
    settings: `\`${unsigned}\` (UNSIGNED-PAYLOAD over plain HTTP, as the CRT always sends); uploads only`,
    version: s3x.version,
    env,
    ops: {
      upFile: (f, k) => `${x} cp ${q(f)} ${s3(k)} ${xo} ${unsigned}`,
      upStdin: (k) => `${x} cp - ${s3(k)} ${xo} ${unsigned}`,
      upDir: (d, p) => `${x} cp --recursive ${q(d)} ${s3(p)} ${xo} ${unsigned}`,
    },
    why: Object.fromEntries((["downFile", "downStdout", "downDir", "list", "sync", "copy"] as const).map((op) => [op, "no upload body: same as the defaults"])),
  };

  // AWS CLI v2 (Debian), classic transfer client and CRT.
  const awsVersion = firstLine("/usr/bin/aws", ["--version"]).split(" ")[0]?.replace("aws-cli/", "") ?? "?";
  const awsOps = (): Ops => {
    const a = `/usr/bin/aws --endpoint-url ${ep}`;
    const o = "--only-show-errors --no-progress";
    return {
      upFile: (f, k) => `${a} s3 cp ${q(f)} ${s3(k)} ${o}`,
      downFile: (k, f) => `${a} s3 cp ${s3(k)} ${q(f)} ${o}`,
      downStdout: (k) => `${a} s3 cp ${s3(k)} - ${o}`,
      upStdin: (k) => `${a} s3 cp - ${s3(k)} ${o}`,
      upDir: (d, p) => `${a} s3 cp --recursive ${q(d)} ${s3(p)} ${o}`,
      downDir: (p, d) => `${a} s3 cp --recursive ${s3(p)} ${q(d)} ${o}`,
      list: (p) => `${a} s3 ls --recursive ${s3(p)}`,
      sync: (d, p) => `${a} s3 sync ${q(d)} ${s3(p)} ${o}`,
      copy: (s, t) => `${a} s3 cp ${s3(s)} ${s3(t)} ${o}`,
    };
  };
  const aws: Variant = {
    id: "aws",
    name: "aws-cli",
    settings: "defaults: classic transfer client (10 concurrent requests, 8 MiB parts, signed payloads over HTTP)",
    version: awsVersion,
    env,
    ops: awsOps(),
    skip: missing("awscli"),
  };
  const awsTunedOps = awsOps();
  delete awsTunedOps.list; // ls and a no-op sync do not use the transfer settings: same as the defaults
  delete awsTunedOps.sync;
  delete awsTunedOps.downStdout; // a download to stdout is one stream whatever the settings
  const awsTuned: Variant = {
    id: "aws-crt",
    name: "aws-cli tuned (CRT)",
    settings:
      "`preferred_transfer_client = crt`, `multipart_chunksize = 16MB`, `max_concurrent_requests = 32` " +
      "(the CRT falls back to the classic client, with those settings, for stdin/stdout streams and S3→S3)",
    version: `${awsVersion}, awscrt ${debVersion("python3-awscrt")}`,
    env: { ...env, AWS_CONFIG_FILE: join(work, "aws-tuned.cfg") },
    ops: awsTunedOps,
    why: { list: "same as aws-cli: no transfer settings involved", sync: "same as aws-cli: nothing transferred", downStdout: "one stream whatever the settings" },
    skip: missing("awscli") ?? needs80,
  };

  // The CRT itself.
  const crtCommand = `/usr/bin/python3 ${q(join(work, "crt.py"))}`;
  const crt: Variant = {
    id: "crt",
    name: "CRT (awscrt Python)",
    settings: "`awscrt.s3.S3Client` defaults (throughput target 10 Gbps, 8 MiB parts); one CopyObject for S3→S3; no stdin (needs a length), no sync",
    version: `python3-awscrt ${debVersion("python3-awscrt")}`,
    env: { ...env, CRT_HOSTPORT: hostport, CRT_GBPS: "0", CRT_PART_SIZE: "0", ...(tls ? { CRT_CA_FILE: tls.certFile } : {}) },
    why: { upStdin: "0.16 needs the length up front", sync: "no sync" },
    ops: {
      upFile: (f, k) => `${crtCommand} put ${q(f)} ${BUCKET} ${q(k)}`,
      downFile: (k, f) => `${crtCommand} get ${BUCKET} ${q(k)} ${q(f)}`,
      downStdout: (k) => `${crtCommand} get ${BUCKET} ${q(k)} -`,
      upDir: (d, p) => `${crtCommand} put-dir ${q(d)} ${BUCKET} ${q(p)}`,
      downDir: (p, d) => `${crtCommand} get-dir ${BUCKET} ${q(p)} ${q(d)}`,
      list: (p) => `${crtCommand} ls ${BUCKET} ${q(p)}`,
      copy: (a, b) => `${crtCommand} copy ${BUCKET} ${q(a)} ${BUCKET} ${q(b)}`,
    },
    skip: missing("python3-awscrt") ?? needs80,
  };

  // rclone: remote "s3" in a config file of its own.
  const rcloneOps = (extra: string, syncExtra: string): Ops => {
    const r = `/usr/bin/rclone --config ${q(join(work, "rclone.conf"))} -q${extra}`;
    const remote = (key: string) => q(`${tls ? "s3tls" : "s3"}:${BUCKET}/${key.replace(/\/$/, "")}`);
    return {
      upFile: (f, k) => `${r} copyto ${q(f)} ${remote(k)}`,
      downFile: (k, f) => `${r} copyto ${remote(k)} ${q(f)}`,
      downStdout: (k) => `${r} cat ${remote(k)}`,
      upStdin: (k) => `${r} rcat ${remote(k)}`,
      upDir: (d, p) => `${r} copy ${q(d)} ${remote(p)}`,
      downDir: (p, d) => `${r} copy ${remote(p)} ${q(d)}`,
      list: (p) => `${r} ls ${remote(p)}`,
      sync: (d, p) => `${r} sync ${q(d)} ${remote(p)}${syncExtra}`,
      copy: (a, b) => `${r} copyto ${remote(a)} ${remote(b)}`,
    };
  };
  // Go's TLS reads its trust store from SSL_CERT_FILE (rclone 1.60's --ca-cert fails for S3: "unsupported transport").
  // (Its AWS SDK also reads AWS_CA_BUNDLE, into that failing path: unset here.)
  const rcloneEnv = tls ? { ...env, SSL_CERT_FILE: tls.certFile, AWS_CA_BUNDLE: undefined } : env;
  const rcloneVersion = firstLine("/usr/bin/rclone", ["version"]).replace(/^rclone\s+/, "");
  const rclone: Variant = {
    id: "rclone",
    name: "rclone",
    settings: "defaults (4 transfers, 8 checkers, 4 download streams × 64 MiB above 256 MiB, 5 MiB upload chunks × 4, MD5 of uploads)",
    version: rcloneVersion,
    env: rcloneEnv,
    ops: rcloneOps("", ""),
    skip: missing("rclone"),
  };
  const tunedFlags =
    " --transfers 32 --checkers 32 --multi-thread-streams 8 --s3-chunk-size 16M --s3-upload-concurrency 8 --s3-disable-checksum --fast-list";
  const rcloneTunedOps = rcloneOps(tunedFlags, " --update --use-server-modtime");
  delete rcloneTunedOps.downStdout; // `cat` is one stream whatever the settings
  delete rcloneTunedOps.list; // a flat prefix lists the same with --fast-list
  delete rcloneTunedOps.copy; // server-side CopyObject either way
  const rcloneTuned: Variant = {
    id: "rclone-t",
    name: "rclone tuned",
    settings: `\`${tunedFlags.trim()}\`; sync adds \`--update --use-server-modtime\` (no HEAD per object)`,
    version: rcloneVersion,
    env: rcloneEnv,
    ops: rcloneTunedOps,
    why: { downStdout: "`cat` is one stream whatever the settings", list: "a flat prefix lists the same", copy: "one server-side CopyObject either way" },
    skip: missing("rclone"),
  };

  // s3cmd
  const c = `/usr/bin/s3cmd -c ${q(join(work, tls ? "s3cfg-tls" : "s3cfg"))}`;
  const so = "--no-progress --quiet";
  const s3cmd: Variant = {
    id: "s3cmd",
    name: "s3cmd",
    settings: "defaults (one transfer at a time, 15 MiB multipart chunks)",
    version: firstLine("/usr/bin/s3cmd", ["--version"]).replace(/^s3cmd version\s+/, ""),
    env,
    ops: {
      upFile: (f, k) => `${c} ${so} put ${q(f)} ${s3(k)}`,
      downFile: (k, f) => `${c} ${so} get --force ${s3(k)} ${q(f)}`,
      downStdout: (k) => `${c} ${so} get ${s3(k)} -`,
      upStdin: (k) => `${c} ${so} put - ${s3(k)}`,
      upDir: (d, p) => `${c} ${so} put --recursive ${q(`${d}/`)} ${s3(p)}`,
      downDir: (p, d) => `${c} ${so} get --recursive ${s3(p)} ${q(`${d}/`)}`,
      list: (p) => `${c} ls --recursive ${s3(p)}`,
      sync: (d, p) => `${c} ${so} sync ${q(`${d}/`)} ${s3(p)}`,
      copy: (a, b) => `${c} ${so} cp ${s3(a)} ${s3(b)}`,
    },
    skip: missing("s3cmd"),
  };

  // The Node SDK (lib-storage).
  let sdkVersion = "?";
  let sdkSkip: string | undefined;
  try {
    const v = (p: string) => (JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", p, "package.json"), "utf8")) as { version: string }).version;
    sdkVersion = `@aws-sdk/client-s3 ${v("@aws-sdk/client-s3")}, lib-storage ${v("@aws-sdk/lib-storage")}`;
  } catch {
    sdkSkip = "@aws-sdk/lib-storage not installed (npm ci)";
  }
  const n = `${q(process.execPath)} ${q(join(work, "sdk.mjs"))}`;
  const sdkOps = (): Ops => ({
    upFile: (f, k) => `${n} put ${q(f)} ${BUCKET} ${q(k)}`,
    downFile: (k, f) => `${n} get ${BUCKET} ${q(k)} ${q(f)}`,
    downStdout: (k) => `${n} get ${BUCKET} ${q(k)} -`,
    upStdin: (k) => `${n} put-stdin ${BUCKET} ${q(k)}`,
    upDir: (d, p) => `${n} put-dir ${q(d)} ${BUCKET} ${q(p)}`,
    downDir: (p, d) => `${n} get-dir ${BUCKET} ${q(p)} ${q(d)}`,
    list: (p) => `${n} ls ${BUCKET} ${q(p)}`,
    copy: (a, b) => `${n} copy ${BUCKET} ${q(a)} ${BUCKET} ${q(b)}`,
  });
  const sdkEnv = { ...env, SDK_ENDPOINT: ep, S3X_BENCH_ROOT: REPO_ROOT, ...(tls ? { SDK_CA_FILE: tls.certFile } : {}) };
  const sdk: Variant = {
    id: "sdk",
    name: "Node SDK",
    settings:
      "lib-storage `Upload` defaults (5 MiB parts, queueSize 4); one `GetObject` stream; 16 objects in flight for many files; " +
      "checksums `WHEN_REQUIRED` (radosgw rejects the SDK's default aws-chunked trailers)",
    version: sdkVersion,
    env: sdkEnv,
    ops: sdkOps(),
    why: { sync: "no sync" },
    skip: sdkSkip,
  };
  const sdkTunedOps = sdkOps();
  // Only where the baseline (BRIEF §6) tuned it: the big uploads.
  const sdkUntuned = ["downFile", "downStdout", "upDir", "downDir", "list", "copy"] as const;
  for (const op of sdkUntuned) delete sdkTunedOps[op];
  const sdkTuned: Variant = {
    id: "sdk-t",
    name: "Node SDK tuned",
    settings: "`Upload` with 16 MiB parts, queueSize 8 (big uploads only)",
    version: sdkVersion,
    env: { ...sdkEnv, SDK_PART_SIZE: String(16 * MiB), SDK_QUEUE: "8", SDK_CONCURRENCY: "64" },
    ops: sdkTunedOps,
    why: { ...Object.fromEntries(sdkUntuned.map((op) => [op, "tuned for big uploads only"])), sync: "no sync" },
    skip: sdkSkip,
  };

  const all = [s3x, s3xTuned, aws, awsTuned, crt, rclone, rcloneTuned, s3cmd, sdk, sdkTuned];
  if (compareBuild) {
    const xb = `${q(process.execPath)} ${q(join(compareBuild, "bin", "s3x.js"))}`;
    const describe = spawnSync("git", ["-C", compareBuild, "describe", "--always", "--dirty"], { encoding: "utf8" }).stdout?.trim();
    all.push({
      ...s3x,
      id: "s3x-b",
      name: "s3x B",
      settings: `the build in ${compareBuild}, same options as s3x (A/B)`,
      version: describe || "?",
      ops: Object.fromEntries(Object.entries(s3x.ops).map(([op, make]) => [op, (...args: string[]) => (make as (...a: string[]) => string)(...args).replace(x, xb)])) as Ops,
    });
  }
  return all.map((v) => ({ ...v, id: `${v.id}${tls ? TLS_SUFFIX : ""}`, name: `${v.name} ${tls ? "HTTPS" : "HTTP"}` }));
}

async function writeConfigs(server: RadosgwServer, work: string, tls?: TlsSetup): Promise<void> {
  const ep = server.endpoint;
  const hostport = new URL(ep).host;
  await mkdir(join(work, "home", ".config"), { recursive: true });
  await mkdir(join(work, "home", ".cache"), { recursive: true });
  await writeFile(join(work, "aws-credentials"), "");
  await writeFile(join(work, "aws-default.cfg"), `[default]\nregion = ${server.region}\n`);
  await writeFile(
    join(work, "aws-tuned.cfg"),
    `[default]\nregion = ${server.region}\ns3 =\n  preferred_transfer_client = crt\n  multipart_chunksize = 16MB\n  max_concurrent_requests = 32\n`,
  );
  const rcloneRemote = (name: string, endpoint: string) =>
    `[${name}]\ntype = s3\nprovider = Ceph\nenv_auth = false\naccess_key_id = ${server.accessKeyId}\nsecret_access_key = ${server.secretAccessKey}\n` +
    `endpoint = ${endpoint}\nregion = ${server.region}\nforce_path_style = true\n`;
  await writeFile(join(work, "rclone.conf"), rcloneRemote("s3", ep) + (tls ? `\n${rcloneRemote("s3tls", tls.endpoint)}` : ""));
  const s3cfg = (hostPort: string, https: string) =>
    `[default]\naccess_key = ${server.accessKeyId}\nsecret_key = ${server.secretAccessKey}\nhost_base = ${hostPort}\nhost_bucket = ${hostPort}\n` +
    `bucket_location = ${server.region}\n${https}signature_v2 = False\n`;
  await writeFile(join(work, "s3cfg"), s3cfg(hostport, "use_https = False\n"));
  if (tls) {
    await writeFile(join(work, "s3cfg-tls"), s3cfg(new URL(tls.endpoint).host, `use_https = True\nca_certs_file = ${tls.certFile}\ncheck_ssl_certificate = True\n`));
  }
  await writeFile(join(work, "crt.py"), CRT_SCRIPT);
  await writeFile(join(work, "sdk.mjs"), SDK_SCRIPT);
}

// ---------------------------------------------------------------------------
// Timing

interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
  serverCpu: number;
}

interface Timed extends Sample {
  stdout: string;
  error?: string;
}

/**
 * Runs a bash command in which `{TIME}` marks the one program to account to
 * the client: wall time of the whole command, CPU and peak RSS of that
 * program (GNU time), server CPU from /proc. Killed after limitSeconds.
 */
function timed(command: string, env: NodeJS.ProcessEnv, server: RadosgwServer, timeFile: string): Timed {
  const line = command.replace("{TIME}", `/usr/bin/time -o ${q(timeFile)} -f "%U %S %M"`);
  rmSync(timeFile, { force: true });
  const pids = server.pids();
  const before = serverCpuSeconds(pids);
  const started = process.hrtime.bigint();
  // timeout(1) signals its whole process group, so pipelines go too.
  const res = spawnSync("timeout", ["-k", "10", String(limitSeconds), "bash", "-o", "pipefail", "-c", line], {
    env,
    encoding: "utf8",
    maxBuffer: 256 * MiB,
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const serverCpu = serverCpuSeconds(pids) - before;
  let cpu = NaN;
  let rssMiB = NaN;
  try {
    const last = readFileSync(timeFile, "utf8").trim().split("\n").pop() ?? "";
    const [user, sys, rss] = last.split(" ").map(Number);
    cpu = user + sys;
    rssMiB = rss / 1024;
  } catch {
    // no time file: reported below as a failure
  }
  let error: string | undefined;
  if (res.status !== 0) {
    const why = res.status === 124 || res.status === 137 ? `timed out after ${limitSeconds} s` : `exit ${res.status ?? res.signal}`;
    error = `${why}: ${(res.stderr ?? "").trim().split("\n").slice(-3).join(" / ").slice(0, 300)}`;
  } else if (Number.isNaN(cpu)) {
    error = "no GNU time output";
  }
  return { wall, cpu, rssMiB, serverCpu, stdout: res.stdout ?? "", error };
}

// ---------------------------------------------------------------------------
// Workloads

interface Workload {
  n: number;
  title: string;
  op: OpName;
  /** Bytes (for MB/s) or objects (for objects/s). */
  amount: number;
  unit: "MB/s" | "objects/s" | "keys/s" | "files/s";
  /** How each run is checked, for the table. */
  check: string;
  /** Once per tool before its first run (untimed). */
  prepare?: (v: Variant) => Promise<void>;
  /** Before every run (untimed). */
  before?: (v: Variant, run: number) => Promise<void>;
  /** The command, with {TIME} before the tool. */
  command: (v: Variant, run: number) => string;
  /** Throws if the result is wrong. */
  verify: (v: Variant, run: number, stdout: string) => Promise<void>;
  cleanup: (v: Variant, run: number) => Promise<void>;
}

interface Cell {
  samples: Sample[];
  walls: number[];
  error?: string;
}

function md5(data: Buffer): string {
  return createHash("md5").update(data).digest("hex");
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

async function main(server: RadosgwServer, work: string, notInstalled: string[], crtPort: boolean, tls: TlsSetup | undefined): Promise<void> {
  const t0 = Date.now();
  const load0 = loadavg();
  const admin = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await writeConfigs(server, work, tls);
  // HTTPS first, as users reach S3; the two transports interleave like the tools.
  let variants = transports.flatMap((t) => makeVariants(server, work, notInstalled, crtPort, t === "https" ? tls : undefined));
  if (onlyTools.length > 0) variants = variants.filter((v) => onlyTools.includes(baseId(v.id)));
  const conf = join(server.dir, "ceph.conf");

  const pool = async <T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> => {
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }));
  };
  const listAll = async (Prefix: string): Promise<_Object[]> => {
    const out: _Object[] = [];
    let ContinuationToken: string | undefined;
    do {
      const r = await admin.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix, ContinuationToken }));
      out.push(...(r.Contents ?? []));
      ContinuationToken = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return out;
  };
  /** Deletes keys and has radosgw free their data now (its garbage collector would wait ≥ 60 s, filling memstore). */
  const deleteKeys = async (keysToDelete: string[]): Promise<void> => {
    for (let i = 0; i < keysToDelete.length; i += 1000) {
      await admin.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keysToDelete.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }));
    }
    spawnSync("radosgw-admin", ["-c", conf, "gc", "process", "--include-all"], { stdio: "ignore" });
  };
  /** Reads an object back with curl (its own SigV4 signer, one stream) and hashes it with openssl. */
  const sha256OfObject = (key: string): string => {
    const r = spawnSync(
      "bash",
      [
        "-o", "pipefail", "-c",
        `curl -sS --fail --aws-sigv4 ${q(`aws:amz:${server.region}:s3`)} --user ${q(`${server.accessKeyId}:${server.secretAccessKey}`)} ` +
          `-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' ${q(`${server.endpoint}/${BUCKET}/${key}`)} | openssl dgst -sha256 -r`,
      ],
      { encoding: "utf8" },
    );
    if (r.status !== 0) throw new Error(`reading ${key} back failed: ${r.stderr.trim()}`);
    return r.stdout.split(" ")[0];
  };
  const sha256OfFile = (file: string): string => {
    const r = spawnSync("openssl", ["dgst", "-sha256", "-r", file], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`no file ${file}: ${r.stderr.trim()}`);
    return r.stdout.split(" ")[0];
  };

  // ---- data
  log(`generating data: ${sizeText(bigSize)} file, ${files} × 64 KiB files, ${keys} keys to list`);
  const bigFile = join(work, "big.bin");
  const bigHash = createHash("sha256");
  const fh = await open(bigFile, "w");
  for (let written = 0; written < bigSize; written += 64 * MiB) {
    const chunk = randomBytes(Math.min(64 * MiB, bigSize - written));
    bigHash.update(chunk);
    await fh.write(chunk);
  }
  await fh.close();
  const bigSha = bigHash.digest("hex");
  const smallDir = join(work, "small");
  await mkdir(smallDir);
  const smallMd5 = new Map<string, string>();
  const smallSha = new Map<string, string>();
  for (let i = 0; i < files; i++) {
    const name = `f${String(i).padStart(5, "0")}.bin`;
    const data = randomBytes(fileSize);
    smallMd5.set(name, md5(data));
    smallSha.set(name, sha256(data));
    await writeFile(join(smallDir, name), data);
  }
  // The objects to download and list, put once with the SDK (8 MiB parts, as s3x and the CRT use).
  const { Upload } = await import("@aws-sdk/lib-storage");
  const { createReadStream } = await import("node:fs");
  await new Upload({ client: admin, params: { Bucket: BUCKET, Key: "big", Body: createReadStream(bigFile) }, partSize: 8 * MiB, queueSize: 4 }).done();
  if (sha256OfObject("big") !== bigSha) throw new Error("the source object did not read back intact");
  await pool([...smallMd5.keys()], 32, async (name) => {
    await admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: `small-src/${name}`, Body: await readFile(join(smallDir, name)) }));
  });
  const shardKey = (i: number) => `shards/shard-${String(i).padStart(4, "0")}.tar`;
  const shardSha = new Map<string, string>();
  await pool(Array.from({ length: shards }, (_, i) => i), 8, async (i) => {
    const data = randomBytes(shardSize);
    shardSha.set(shardKey(i), sha256(data));
    await admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: shardKey(i), Body: data }));
  });
  const keyName = (i: number) => `list/k${String(i).padStart(6, "0")}`;
  await pool(Array.from({ length: keys }, (_, i) => i), 64, async (i) => {
    await admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: keyName(i), Body: "x" }));
  });
  log(`data ready (${fmt((Date.now() - t0) / 1000, 0)} s)`);

  // ---- workloads
  const tag = (v: Variant, run: number) => `${v.id}-${run}`;
  const downFile = (v: Variant, run: number) => join(work, `down-${tag(v, run)}.bin`);
  const downDir = (v: Variant, run: number) => join(work, `down-${tag(v, run)}`);
  const checkObject = async (key: string) => {
    const got = sha256OfObject(key);
    if (got !== bigSha) throw new Error(`s3://${BUCKET}/${key} has sha256 ${got.slice(0, 12)}…, expected ${bigSha.slice(0, 12)}…`);
  };
  const checkSmallPrefix = async (prefix: string) => {
    const objects = await listAll(prefix);
    if (objects.length !== files) throw new Error(`${objects.length} objects under ${prefix}, expected ${files}`);
    for (const o of objects) {
      const name = o.Key!.slice(prefix.length);
      const etag = (o.ETag ?? "").replace(/"/g, "");
      if (smallMd5.get(name) !== etag || o.Size !== fileSize) throw new Error(`${o.Key}: ETag ${etag} size ${o.Size} does not match ${name}`);
    }
  };
  const syncState = new Map<string, string>();
  const syncListing = async (prefix: string) =>
    (await listAll(prefix)).map((o) => `${o.Key} ${o.ETag} ${o.Size} ${o.LastModified?.toISOString()}`).join("\n");
  const big = sizeText(bigSize);

  const allWorkloads: Workload[] = [
    {
      n: 1,
      title: `upload ${big} file`,
      op: "upFile",
      amount: bigSize,
      unit: "MB/s",
      check: "read back with curl, sha256",
      command: (v, run) => `{TIME} ${v.ops.upFile!(bigFile, `up/${tag(v, run)}`)}`,
      verify: async (v, run) => checkObject(`up/${tag(v, run)}`),
      cleanup: async (v, run) => deleteKeys([`up/${tag(v, run)}`]),
    },
    {
      n: 2,
      title: `download ${big} → file`,
      op: "downFile",
      amount: bigSize,
      unit: "MB/s",
      check: "sha256 of the file",
      command: (v, run) => `{TIME} ${v.ops.downFile!("big", downFile(v, run))}`,
      verify: async (v, run) => {
        const got = sha256OfFile(downFile(v, run));
        if (got !== bigSha) throw new Error(`file sha256 ${got.slice(0, 12)}…, expected ${bigSha.slice(0, 12)}…`);
      },
      cleanup: async (v, run) => rm(downFile(v, run), { force: true }),
    },
    {
      n: 3,
      title: `download ${big} → stdout → \`openssl dgst -sha256\``,
      op: "downStdout",
      amount: bigSize,
      unit: "MB/s",
      check: "sha256 of the stream (openssl)",
      command: (v) => `{TIME} ${v.ops.downStdout!("big")} | openssl dgst -sha256 -r`,
      verify: async (_v, _run, stdout) => {
        if (!stdout.startsWith(bigSha)) throw new Error(`stream sha256 ${stdout.slice(0, 12)}…, expected ${bigSha.slice(0, 12)}…`);
      },
      cleanup: async () => {},
    },
    {
      n: 4,
      title: `upload ${big} from stdin`,
      op: "upStdin",
      amount: bigSize,
      unit: "MB/s",
      check: "read back with curl, sha256",
      command: (v, run) => `cat ${q(bigFile)} | {TIME} ${v.ops.upStdin!(`stdin/${tag(v, run)}`)}`,
      verify: async (v, run) => checkObject(`stdin/${tag(v, run)}`),
      cleanup: async (v, run) => deleteKeys([`stdin/${tag(v, run)}`]),
    },
    {
      n: 5,
      title: `upload ${thousands(files)} × 64 KiB files (recursive)`,
      op: "upDir",
      amount: files,
      unit: "objects/s",
      check: "every ETag = MD5 of its file",
      command: (v, run) => `{TIME} ${v.ops.upDir!(smallDir, `small-up/${tag(v, run)}/`)}`,
      verify: async (v, run) => checkSmallPrefix(`small-up/${tag(v, run)}/`),
      cleanup: async (v, run) => deleteKeys((await listAll(`small-up/${tag(v, run)}/`)).map((o) => o.Key!)),
    },
    {
      n: 6,
      title: `download ${thousands(files)} × 64 KiB objects (recursive)`,
      op: "downDir",
      amount: files,
      unit: "objects/s",
      check: "sha256 of every file",
      // The destination directory exists already (s3cmd insists on it).
      before: async (v, run) => void (await mkdir(downDir(v, run), { recursive: true })),
      command: (v, run) => `{TIME} ${v.ops.downDir!("small-src/", downDir(v, run))}`,
      verify: async (v, run) => {
        const dir = downDir(v, run);
        const names = await readdir(dir).catch(() => [] as string[]);
        if (names.length !== files) throw new Error(`${names.length} files downloaded, expected ${files}`);
        for (const name of names) {
          if (smallSha.get(name) !== sha256(await readFile(join(dir, name)))) throw new Error(`${name} differs`);
        }
      },
      cleanup: async (v, run) => rm(downDir(v, run), { recursive: true, force: true }),
    },
    {
      n: 7,
      title: `list ${thousands(keys)} keys`,
      op: "list",
      amount: keys,
      unit: "keys/s",
      check: "every key printed once",
      command: (v) => `{TIME} ${v.ops.list!("list/")}`,
      verify: async (_v, _run, stdout) => {
        const seen = new Set(stdout.match(/k\d{6}/g) ?? []);
        const lines = stdout.split("\n").filter((l) => /k\d{6}/.test(l)).length;
        if (seen.size !== keys || lines !== keys) throw new Error(`${seen.size} distinct keys on ${lines} lines, expected ${keys}`);
      },
      cleanup: async () => {},
    },
    {
      n: 8,
      title: `no-op sync of ${thousands(files)} files`,
      op: "sync",
      amount: files,
      unit: "files/s",
      check: "after a first sync by the same tool (untimed; ETags checked): nothing changed",
      prepare: async (v) => {
        const prefix = `sync/${v.id}/`;
        const r = timed(`{TIME} ${v.ops.sync!(smallDir, prefix)}`, v.env, server, join(work, "time.txt"));
        if (r.error) throw new Error(`first sync failed: ${r.error}`);
        await checkSmallPrefix(prefix);
        syncState.set(v.id, await syncListing(prefix));
      },
      command: (v) => `{TIME} ${v.ops.sync!(smallDir, `sync/${v.id}/`)}`,
      verify: async (v) => {
        if ((await syncListing(`sync/${v.id}/`)) !== syncState.get(v.id)) throw new Error("the sync changed objects");
      },
      cleanup: async () => {},
    },
    {
      n: 9,
      title: `S3 → S3 copy of the ${big} object`,
      op: "copy",
      amount: bigSize,
      unit: "MB/s",
      check: "read back with curl, sha256",
      command: (v, run) => `{TIME} ${v.ops.copy!("big", `copy/${tag(v, run)}`)}`,
      verify: async (v, run) => checkObject(`copy/${tag(v, run)}`),
      cleanup: async (v, run) => deleteKeys([`copy/${tag(v, run)}`]),
    },
  ];
  allWorkloads.push({
    n: 10,
    title: `${shards} × ${sizeText(shardSize)} shards, one process each → \`openssl dgst -sha256\``,
    op: "downStdout",
    amount: shards * shardSize,
    unit: "MB/s",
    check: "sha256 of every shard's stream",
    // GNU time of the loop's shell counts every child it waited for: CPU of all the processes, peak RSS of the largest.
    command: (v) => {
      const loop = Array.from({ length: shards }, (_, i) => `${v.ops.downStdout!(shardKey(i))} | openssl dgst -sha256 -r`).join(" && ");
      return `{TIME} bash -o pipefail -c ${q(loop)}`;
    },
    verify: async (_v, _run, stdout) => {
      const got = stdout.trim().split("\n").map((line) => line.split(" ")[0]);
      const want = Array.from({ length: shards }, (_, i) => shardSha.get(shardKey(i)));
      if (got.length !== shards || got.some((h, i) => h !== want[i])) throw new Error(`${got.filter((h, i) => h === want[i]).length} of ${shards} shards arrived intact`);
    },
    cleanup: async () => {},
  });
  const workloads = allWorkloads.filter((w) => onlyWorkloads.length === 0 || onlyWorkloads.includes(w.n));

  // Load every tool once (binaries, Python modules, the SDK) so the first timed run is not a cold start.
  for (const v of variants.filter((x) => !x.skip && x.ops.list)) {
    const r = timed(`{TIME} ${v.ops.list!("nothing-here/")}`, v.env, server, join(work, "time.txt"));
    // An empty listing is an error for some tools (aws-cli exits 1): only complaints count.
    if (r.error && !/exit 1: $/.test(r.error)) log(`warm-up of ${v.name} failed: ${r.error}`);
  }

  const cells = new Map<number, Map<string, Cell>>();
  for (const w of workloads) {
    const tw = Date.now();
    const tools = variants.filter((v) => !v.skip && v.ops[w.op]);
    const row = new Map<string, Cell>(tools.map((v) => [v.id, { samples: [], walls: [] }]));
    cells.set(w.n, row);
    for (const v of tools) {
      try {
        await w.prepare?.(v);
      } catch (err) {
        row.get(v.id)!.error = (err as Error).message;
      }
    }
    for (let run = 0; run < runs; run++) {
      for (const v of roundOrder(tools, `workload ${w.n}`, run)) {
        const cell = row.get(v.id)!;
        if (cell.error) continue;
        await w.before?.(v, run);
        if (w.amount === bigSize) warmFreeMemory(join(work, "warm.bin"), bigSize);
        const r = timed(w.command(v, run), v.env, server, join(work, "time.txt"));
        let verdict = "ok";
        if (r.error) {
          cell.error = r.error;
          verdict = `FAILED: ${r.error}`;
        } else {
          try {
            await w.verify(v, run, r.stdout);
            cell.samples.push(r);
            cell.walls.push(r.wall);
          } catch (err) {
            cell.error = `wrong result: ${(err as Error).message}`;
            verdict = `WRONG: ${(err as Error).message}`;
          }
        }
        await w.cleanup(v, run).catch((err: unknown) => log(`cleanup after ${v.name}: ${(err as Error).message}`));
        log(`[${w.n}. ${w.title}] run ${run + 1}/${runs} ${v.name.replace(/\*/g, "")}: ${fmt(r.wall)} s, CPU ${fmt(r.cpu)} s, server ${fmt(r.serverCpu)} s — ${verdict}`);
      }
    }
    log(`[${w.n}] done in ${fmt((Date.now() - tw) / 1000, 0)} s`);
  }
  admin.destroy();

  const report = render(workloads, variants, cells, {
    seconds: (Date.now() - t0) / 1000,
    load0,
    load1: loadavg(),
    crtPort,
    tlsFloor: tlsFloor(),
  });
  process.stdout.write(`\n${report}`);
  const date = new Date();
  const day = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")}`;
  const out = argText("out", quick ? join(tmpdir(), `s3x-bench-quick-${day}.md`) : join(REPO_ROOT, "bench", "results", `${day}.md`));
  await mkdir(join(out, ".."), { recursive: true });
  await writeFile(out, report);
  log(`\nwritten to ${out}`);
}

// ---------------------------------------------------------------------------
// Report

function render(
  workloads: Workload[],
  variants: Variant[],
  cells: Map<number, Map<string, Cell>>,
  info: { seconds: number; load0: number[]; load1: number[]; crtPort: boolean; tlsFloor: string },
): string {
  const lines: string[] = [];
  const p = (s = "") => lines.push(s);
  const med = (c: Cell, f: (s: Sample) => number) => median(c.samples.map(f));
  const ok = (c: Cell | undefined): boolean => c !== undefined && !c.error && c.samples.length > 0;
  const rate = (w: Workload, wall: number) => (w.unit === "MB/s" ? `${fmt(w.amount / wall / 1e6, 0)} MB/s` : `${fmt(w.amount / wall, 0)} ${w.unit}`);
  const name = (id: string) => variants.find((v) => v.id === id)?.name ?? id;
  const cpuModel = cpus()[0]?.model.trim() ?? "?";
  const radosgw = firstLine("radosgw", ["--version"]).replace(/^ceph version\s+/, "").split(" ")[0];

  p(`# s3x against its peers — ${new Date().toISOString().slice(0, 10)}`);
  p();
  p(
    `Machine: ${cpus().length} cores (${cpuModel}), ${fmt(totalmem() / GiB, 0)} GiB RAM, Linux ${release()}, Node ${process.version}. ` +
      `Server: Ceph radosgw ${radosgw} with the memstore object store on 127.0.0.1${info.crtPort ? " (also on port 80 for the CRT)" : ""}, ` +
      "serving plain HTTP and HTTPS (beast's own TLS, a throw-away P-256 certificate every tool is told to trust), client and server on the same cores.",
  );
  p();
  p(
    `Method: ${quick ? "**quick mode** (small sizes, for development only), " : ""}median of ${runs} run${runs === 1 ? "" : "s"} per cell, tools interleaved within each workload ` +
      "(a new order every round, shuffled by a fixed seed, so that no tool always runs right after the same other tool); every run checked (column *checked*), a failed or wrong run fails its cell. Wall seconds include each tool's start-up. " +
      "Client CPU-s = user + system of the tool's process tree, peak RSS of its largest process (GNU time); server CPU-s = ceph-mon + ceph-osd + radosgw " +
      "(/proc/PID/stat). Ratio = s3x wall / best peer wall: below 1.00 s3x is faster. " +
      `Before every timed run of a ${sizeText(bigSize)} workload the benchmark writes and deletes a scratch file of that size, so every tool ` +
      "starts with the same warm free memory (this VM returns memory freed for a few seconds to its host, and touching it again costs " +
      "~8 µs of system time per 4 KiB page: up to ~2.5 CPU-s per GiB written, depending on the pause before the run).",
  );
  p();
  p(
    `**Noise:** 2 shared cores with other work running on the machine (load average ${info.load0.map((l) => fmt(l, 1)).join(" ")} at the start, ` +
      `${info.load1.map((l) => fmt(l, 1)).join(" ")} at the end); client and server compete for the same cores, so differences under ~15 % are within the noise. ` +
      `Total time ${fmt(info.seconds / 60, 1)} min.`,
  );
  p();
  p(`Reproduce: \`npm ci && npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\` (root, Debian/Ubuntu: installs radosgw and the peers with apt-get).`);
  p();
  for (const transport of (["https", "http"] as const).filter((t) => transports.includes(t))) {
    const id = (base: string) => `${base}${transport === "https" ? TLS_SUFFIX : ""}`;
    p(`## Summary over ${transport === "https" ? "HTTPS" : "plain HTTP"}`);
    p();
    if (transport === "https") {
      p(`TLS's own floor on this machine (\`openssl speed -evp\`, one core): ${info.tlsFloor}. Both ends of every HTTPS transfer pay it here: the client's CPU-s per GiB below include one.`);
      p();
    }
    p("| # | workload | s3x wall s | best peer | best peer wall s | **ratio s3x / best** | s3x client CPU-s | CRT client CPU-s | s3x / CRT CPU | s3x tuned wall s / CPU-s | tuned / best peer | tuned / CRT CPU |");
    p("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (const w of workloads) {
      const row = cells.get(w.n)!;
      const mine = row.get(id("s3x"));
      let best: [string, number] | undefined;
      for (const [key, c] of row) {
        if (baseId(key).startsWith("s3x") || transportOf(key) !== transport || !ok(c)) continue;
        const wall = med(c, (s) => s.wall);
        if (!best || wall < best[1]) best = [key, wall];
      }
      const mineWall = mine && ok(mine) ? med(mine, (s) => s.wall) : undefined;
      const crt = row.get(id("crt"));
      const crtCpu = crt && ok(crt) ? med(crt, (s) => s.cpu) : undefined;
      const mineCpu = mine && ok(mine) ? med(mine, (s) => s.cpu) : undefined;
      const tuned = row.get(id("s3x-tuned"));
      const tunedCpu = tuned && ok(tuned) ? med(tuned, (s) => s.cpu) : undefined;
      const tunedWall = tunedCpu === undefined ? undefined : med(tuned!, (s) => s.wall);
      // The same ratio for s3x with the settings its tuned row names, as peers are compared at their best.
      const tunedCells =
        tunedWall === undefined || tunedCpu === undefined
          ? "— | — | —"
          : `${fmt(tunedWall)} / ${fmt(tunedCpu)} | ${best ? fmt(tunedWall / best[1]) : "—"} | ${crtCpu !== undefined && crtCpu > 0 ? fmt(tunedCpu / crtCpu) : "—"}`;
      p(
        `| ${w.n} | ${w.title} | ${mineWall === undefined ? (mine?.error ? "failed" : "—") : fmt(mineWall)} | ${best ? name(best[0]) : "—"} | ${best ? fmt(best[1]) : "—"} | ` +
          `**${mineWall !== undefined && best ? fmt(mineWall / best[1]) : "—"}** | ${mineCpu === undefined ? "—" : fmt(mineCpu)} | ${crtCpu === undefined ? "—" : fmt(crtCpu)} | ` +
          `${mineCpu !== undefined && crtCpu !== undefined && crtCpu > 0 ? fmt(mineCpu / crtCpu) : "—"} | ${tunedCells} |`,
      );
    }
    p();
  }
  if (compareBuild) {
    p("## A/B: s3x (A, this checkout) against s3x B (`--compare`)");
    p();
    p("| # | workload | transport | A wall s | B wall s | A / B wall | A CPU-s | B CPU-s | A / B CPU |");
    p("|---|---|---|---|---|---|---|---|---|");
    for (const w of workloads) {
      for (const transport of transports) {
        const suffix = transport === "https" ? TLS_SUFFIX : "";
        const a = cells.get(w.n)?.get(`s3x${suffix}`);
        const b = cells.get(w.n)?.get(`s3x-b${suffix}`);
        if (!ok(a) || !ok(b)) continue;
        const [aw, bw, ac, bc] = [med(a!, (s) => s.wall), med(b!, (s) => s.wall), med(a!, (s) => s.cpu), med(b!, (s) => s.cpu)];
        p(`| ${w.n} | ${w.title} | ${transport} | ${fmt(aw)} | ${fmt(bw)} | **${fmt(aw / bw)}** | ${fmt(ac)} | ${fmt(bc)} | **${fmt(ac / bc)}** |`);
      }
    }
    p();
  }
  const rss = workloads.flatMap((w) => {
    const c = cells.get(w.n)?.get(transports.includes("https") ? `s3x${TLS_SUFFIX}` : "s3x");
    return c && ok(c) ? [[med(c, (s) => s.rssMiB), w.n] as const] : [];
  });
  if (rss.length > 0) {
    const [most, at] = rss.reduce((a, b) => (b[0] > a[0] ? b : a));
    p();
    p(`s3x peak RSS: at most ${fmt(most, 0)} MiB (workload ${at}); its budget is \`--max-memory\` (1 GiB by default) + 150 MiB.`);
  }
  p();
  p("## Every tool, every workload");
  for (const w of workloads) {
    const row = cells.get(w.n)!;
    p();
    p(`### ${w.n}. ${w.title}`);
    p();
    p(`Checked: ${w.check}.`);
    p();
    p("| tool | wall s (median) | runs, s | rate | client CPU-s | peak RSS MiB | server CPU-s | checked |");
    p("|---|---|---|---|---|---|---|---|");
    const sorted = [...row.entries()].sort(([, a], [, b]) => (ok(a) ? med(a, (s) => s.wall) : Infinity) - (ok(b) ? med(b, (s) => s.wall) : Infinity));
    for (const [id, c] of sorted) {
      if (!ok(c)) {
        p(`| ${name(id)} | failed | ${c.walls.map((x) => fmt(x)).join(", ")} | — | — | — | — | ✗ ${(c.error ?? "no run").replace(/\|/g, "\\|")} |`);
        continue;
      }
      const wall = med(c, (s) => s.wall);
      p(
        `| ${name(id)} | ${fmt(wall)} | ${c.walls.map((x) => fmt(x)).join(", ")} | ${rate(w, wall)} | ${fmt(med(c, (s) => s.cpu))} | ` +
          `${fmt(med(c, (s) => s.rssMiB), 0)} | ${fmt(med(c, (s) => s.serverCpu))} | ✓ ${c.samples.length}/${runs} |`,
      );
    }
    const absent = variants.filter((v) => !row.has(v.id));
    if (absent.length > 0) {
      p();
      p(`Not run: ${absent.map((v) => `${v.name} (${v.skip ?? v.why?.[w.op] ?? "not supported"})`).join("; ")}.`);
    }
  }
  p();
  p("## Tools and settings");
  p();
  p("| tool | version | settings |");
  p("|---|---|---|");
  for (const v of variants) p(`| ${v.name} | ${v.version} | ${v.settings}${v.skip ? ` — **not run: ${v.skip}**` : ""} |`);
  p();
  p(
    "Configuration of every peer lives in a scratch directory (HOME, AWS_CONFIG_FILE, rclone --config, s3cmd -c) and names only the local endpoint; " +
      "Proxies and the CA-bundle variables of the caller are unset; over HTTPS, AWS_CA_BUNDLE names the benchmark's certificate (aws-cli, s3x), rclone SSL_CERT_FILE, s3cmd ca_certs_file, the CRT a trust store and the Node SDK an https agent with it (NODE_EXTRA_CA_CERTS alone would cost every Node process ~80 ms at start). The CRT and the Node SDK are driven by small scripts the benchmark writes (bench/peers.ts). " +
      "s5cmd is not installable from the registries here.",
  );
  p();
  return `${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------

const notInstalled = installPeers();
const crtPort = await portFree(80);
if (!crtPort) log("port 80 on 127.0.0.1 is in use: the CRT peers (aws-cli tuned, CRT) are skipped over plain HTTP");
const certificate = transports.includes("https") ? makeCertificate(mkdtempSync(join(tmpdir(), "s3x-bench-tls-"))) : undefined;
const port443 = certificate !== undefined && (await portFree(443));
if (certificate && !port443) log("port 443 on 127.0.0.1 is in use: the CRT peers are skipped over HTTPS");
runBench((server, dir) => main(server, dir, notInstalled, crtPort, certificate && server.tlsEndpoint ? { endpoint: server.tlsEndpoint, certFile: certificate.certFile, port443 } : undefined), {
  extraPorts: crtPort ? [80] : [],
  tls: certificate ? { ...certificate, extraPorts: port443 ? [443] : [] } : undefined,
  memstoreBytes: Math.max(10 * GiB, bigSize * 10),
  log: (l) => log(`[radosgw] ${l}`),
});

/**
 * Write and delete a scratch file as large as the big object, right before a
 * timed run. This VM hands memory freed for a few seconds back to its host;
 * touching such a page again costs ~8 µs of system time (1 GiB written into
 * the page cache: 0.23 s of system CPU right after a delete, 2.1–2.9 s after a
 * 6 s pause). Without this step a tool's CPU figure depends on how long ago
 * the previous tool's file was deleted; with it every tool starts with the
 * same warm free memory, as on a machine without a balloon.
 */
function warmFreeMemory(path: string, bytes: number): void {
  const chunk = Buffer.alloc(8 * 1024 * 1024, 1);
  const fd = openSync(path, "w");
  try {
    for (let at = 0; at < bytes; at += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - at));
  } finally {
    closeSync(fd);
  }
  rmSync(path);
}
