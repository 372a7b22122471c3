/**
 * A throw-away Ceph radosgw (S3) server for integration tests and benchmarks.
 *
 * One call to startRadosgw() builds a complete single-node Ceph cluster in a
 * scratch directory: one ceph-mon, one ceph-osd whose object store is
 * *memstore* (all data lives in the OSD's RAM, nothing touches the disk but
 * logs), and one radosgw serving S3 over HTTP with the beast frontend.
 * No systemd, no ceph-mgr, no cephx. Bring-up takes ~1.5 s; stop()
 * SIGKILLs everything, which is safe because memstore keeps nothing worth
 * shutting down cleanly.
 *
 * Why a real Ceph and not an npm fake: radosgw checks SigV4 signatures, gets
 * suffix ranges and multipart ETags right and returns real 503 SlowDown under
 * load. See /work/shared/BRIEF.md section 3 for the facts behind the settings.
 *
 * Known radosgw 16 quirks that tests have to live with:
 *  - CompleteMultipartUpload returns an empty <ETag> (HEAD the object instead);
 *  - error XML carries an empty <Message>;
 *  - x-amz-checksum-* values are neither stored nor returned;
 *  - the SDK's default aws-chunked uploads with checksum trailers are not
 *    understood: clients must use requestChecksumCalculation 'WHEN_REQUIRED'.
 */
import { spawn, spawnSync, execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants as fsConstants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListBucketsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';

export interface RadosgwOptions {
  /** Loopback addresses radosgw listens on; default ['127.0.0.1']. 127.0.0.2… need no set-up. */
  addresses?: string[];
  /** S3 port (same on every address); default: a free port found automatically. */
  port?: number;
  /** Additional ports to listen on on every address (e.g. 80 for the CRT client, which always dials 80). */
  extraPorts?: number[];
  /**
   * Serve HTTPS too (beast's own TLS, as a real front end terminates it), with
   * this certificate, on `port` (default: a free one) and `extraPorts` of
   * every address (443 for the CRT client, which always dials 443 with TLS on).
   */
  tls?: { certFile: string; keyFile: string; port?: number; extraPorts?: number[] };
  /** 'rgw max concurrent requests': a small value gives real 503 SlowDown; default 1024. */
  maxConcurrentRequests?: number;
  /** 'memstore device bytes': the OSD's capacity (RAM, allocated only as used); default 8 GiB. */
  memstoreBytes?: number;
  /** Working directory for config, logs and daemon data; default a fresh mkdtemp. Removed by stop(). */
  dir?: string;
  /** Progress messages (default: none). */
  log?: (line: string) => void;
  /**
   * beast's tcp_nodelay=1 (off by default): without it radosgw writes an
   * answer's head and body apart under Nagle's algorithm, and a small body
   * waits for the client's delayed ACK (~40 ms) on a connection that has
   * already carried an exchange (a TLS handshake counts).
   */
  tcpNoDelay?: boolean;
}

export interface RadosgwServer {
  /** e.g. http://127.0.0.1:PORT (first address). */
  endpoint: string;
  port: number;
  /** e.g. https://127.0.0.1:PORT when started with `tls`. */
  tlsEndpoint?: string;
  addresses: string[];
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  dir: string;
  /** pids of ceph-mon, ceph-osd and radosgw (for CPU accounting via /proc/PID/stat). */
  pids(): number[];
  /** SIGKILL everything, wait for exit, remove dir. Idempotent. */
  stop(): Promise<void>;
}

/** Fixed credentials of the S3 user every server gets (20 and 40 characters, like AWS keys). */
const ACCESS_KEY_ID = 'S3XTESTACCESSKEY0001';
const SECRET_ACCESS_KEY = 's3xTestSecretKey0000000000000000000000001';
const REGION = 'us-east-1';
/** The AES-256 key radosgw's "testing" KMS backend knows as testkey-1 (base64; a test value, nothing secret). */
export const TEST_KMS_KEY_ID = 'testkey-1';
const TEST_KMS_KEY = Buffer.alloc(32, 7).toString('base64');

/** Everything must be up and answering S3 within this time. */
const STARTUP_TIMEOUT_MS = 90_000;

/** Executables we run; all come with the three Debian packages below (and their dependencies). */
const REQUIRED_BINARIES = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph', 'monmaptool'];
const DEBIAN_PACKAGES = ['radosgw', 'ceph-mon', 'ceph-osd'];

function findExecutable(name: string): string | undefined {
  // Debian puts the daemons in /usr/bin, but a non-root PATH may lack the sbin
  // directories, so look there too.
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin', '/bin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function missingBinaries(): string[] {
  return REQUIRED_BINARIES.filter((b) => findExecutable(b) === undefined);
}

function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Make sure the Ceph daemons are installed. As root, installs the Debian
 * packages (~61 MB, ~30 s); otherwise throws an Error saying what to install.
 */
export function ensureRadosgwInstalled(log?: (l: string) => void): void {
  const missing = missingBinaries();
  if (missing.length === 0) return;

  const installCommand = `apt-get install -y --no-install-recommends ${DEBIAN_PACKAGES.join(' ')}`;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Ceph radosgw is not installed (missing ${missing.join(', ')}); run: sudo ${installCommand}`,
    );
  }

  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const run = (args: string[]) =>
    spawnSync('apt-get', args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

  log?.(`radosgw: missing ${missing.join(', ')}; installing ${DEBIAN_PACKAGES.join(' ')} (takes ~30 s)`);
  const update = run(['update']);
  // A failing mirror makes `apt-get update` exit non-zero although the lists
  // we need may be fine; let the install decide.
  if (update.status !== 0) log?.(`radosgw: apt-get update failed (continuing): ${tail(update.stderr ?? '', 3)}`);
  const install = run(['install', '-y', '--no-install-recommends', ...DEBIAN_PACKAGES]);
  if (install.status !== 0) {
    throw new Error(
      `\`${installCommand}\` failed (${install.error?.message ?? `exit ${install.status}`}):\n` +
        tail(`${update.stderr ?? ''}\n${install.stdout ?? ''}\n${install.stderr ?? ''}`, 20),
    );
  }
  const stillMissing = missingBinaries();
  if (stillMissing.length > 0) {
    throw new Error(`installed ${DEBIAN_PACKAGES.join(' ')} but ${stillMissing.join(', ')} still not found`);
  }
  log?.('radosgw: installed');
}

// ---------------------------------------------------------------------------
// Safety net: daemons of servers that were never stopped die with this process.

interface Instance {
  children: Set<ChildProcess>;
  dir: string;
}

const liveInstances = new Set<Instance>();
let exitHandlerInstalled = false;

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  // 'exit' runs on normal exit, process.exit() and uncaught exceptions (not
  // on a fatal signal to Node itself; a Ctrl-C from a terminal reaches the
  // daemons directly because they stay in our process group). Only
  // synchronous work is possible here.
  process.on('exit', () => {
    for (const instance of liveInstances) {
      for (const child of instance.children) killQuietly(child);
      try {
        rmSync(instance.dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // best effort
      }
    }
  });
}

function killQuietly(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

// ---------------------------------------------------------------------------
// Ports

function listenOnce(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen({ host, port }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A port that is free on every address. The kernel picks it (port 0) on the
 * first address; we check the others. Someone could still take it before the
 * daemon binds it, but with kernel-chosen ephemeral ports that is unlikely.
 */
async function findFreePort(addresses: string[], taken: number[] = []): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await listenOnce(addresses[0], 0);
    if (port === undefined) throw new Error(`cannot listen on ${addresses[0]} (is the address configured?)`);
    let freeEverywhere = !taken.includes(port);
    for (const address of addresses.slice(1)) {
      if ((await listenOnce(address, port)) === undefined) {
        freeEverywhere = false;
        break;
      }
    }
    if (freeEverywhere) return port;
  }
  throw new Error(`no port free on all of ${addresses.join(', ')}`);
}

/** host:port, with brackets for IPv6 (beast's endpoint= and URLs both want that). */
function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

// ---------------------------------------------------------------------------
// ceph.conf

interface ConfParams {
  dir: string;
  fsid: string;
  monPort: number;
  frontends: string[];
  /** beast settings for TLS: ssl_endpoint=… ssl_certificate=… (empty without TLS). */
  tlsFrontends: string[];
  maxConcurrentRequests: number;
  memstoreBytes: number;
  tcpNoDelay?: boolean;
}

function cephConf(p: ConfParams): string {
  const { dir } = p;
  return `# Generated by test/support/radosgw.ts for a throw-away single-node cluster.
[global]
fsid = ${p.fsid}
# Everything on loopback. msgr v1 is off, so the mon has exactly one port.
mon host = v2:127.0.0.1:${p.monPort}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
# The OSD binds its 4 messenger ports itself: it takes the first free ports in
# this range (bind() is atomic, so concurrent clusters cannot collide).
ms bind port min = 6800
ms bind port max = 7300

# No cephx. Without "crc" modes radosgw loops forever on
# "get_initial_auth_request returned -13".
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms client mode = crc
ms service mode = crc
ms cluster mode = crc

# Keep every file inside ${dir} (defaults point to /var/lib/ceph, /var/run/ceph, /var/log/ceph).
keyring = /dev/null
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
crash dir = ${dir}/crash
log file = ${dir}/$name.log
mon cluster log file = default=${dir}/cluster.$channel.log cluster=${dir}/cluster.log

# One OSD: pools of size one, placement across OSDs (type 0) not hosts.
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
# radosgw creates ~7 pools; few PGs each keeps start-up fast and below the
# per-OSD PG limit. No ceph-mgr, so no autoscaler either.
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off

# Logging off on the data path: level 0 keeps start-up messages and errors.
# The second number is the in-memory level; 0 also saves the CPU of
# formatting messages nobody reads.
debug ms = 0/0
debug rgw = 0/0
debug rgw sync = 0/0
debug osd = 0/0
debug filestore = 0/0
debug objecter = 0/0
debug rados = 0/0
debug objclass = 0/0
debug monc = 0/0
debug mon = 0/0
debug paxos = 0/0
debug rocksdb = 0/0
debug auth = 0/0
debug finisher = 0/0
debug throttle = 0/0
debug asok = 0/0

[mon]
mon data = ${dir}/mon
# Each osdmap change otherwise waits up to 1 s; radosgw's first start makes
# about ten of them (pool creations), which is what took start-up to ~13 s.
paxos propose interval = 0.01
# The mon shuts itself down when the disk holding mon data is nearly full.
mon data avail crit = 0

[osd]
osd data = ${dir}/osd
osd journal = ${dir}/osd/journal
osd objectstore = memstore
memstore device bytes = ${p.memstoreBytes}

# Read by radosgw and by radosgw-admin.
[client]
rgw data = ${dir}/rgw
rgw max concurrent requests = ${p.maxConcurrentRequests}
# Caps request bodies such as CompleteMultipartUpload's XML (default 1 MiB).
# The SDK's list of 10,000 parts is ~0.8 MiB already; checksums or
# pretty-printing push it over.
rgw max put param size = 16777216
# Deleted and overwritten objects' data is freed by garbage collection, by
# default no earlier than 2 h later, which would fill memstore in a benchmark.
rgw gc obj min wait = 60
rgw gc processor period = 30
rgw enable usage log = false
rgw enable ops log = false
# Threads that run beast's request coroutines (default 512). On a couple of
# cores 512 threads mostly cost context switches; 32-64 measured as fast or
# faster for 1 GiB up/downloads and 2,000 small objects.
rgw thread pool size = 64
# Server-side encryption over plain HTTP, for the tests of --sse-c and
# --sse aws:kms: SSE-C keys are refused without TLS unless this is off, and
# KMS keys come from this test-only list (never a real key store).
rgw crypt require ssl = false
rgw crypt s3 kms backend = testing
rgw crypt s3 kms encryption keys = testkey-1=${TEST_KMS_KEY}

[client.admin]
# The command-line tools need no admin socket.
admin socket =

[client.rgw]
# One process serving every address x port.
rgw frontends = beast ${[...p.frontends.map((f) => `endpoint=${f}`), ...p.tlsFrontends, ...(p.tcpNoDelay ? ["tcp_nodelay=1"] : [])].join(' ')}
`;
}

// ---------------------------------------------------------------------------
// Bring-up

interface Daemon {
  name: string;
  child: ChildProcess;
  logFile: string;
}

function sleep(ms: number, { unref = false } = {}): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (unref) timer.unref();
  });
}

function readTail(file: string, lines = 30): string {
  try {
    return tail(readFileSync(file, 'utf8'), lines);
  } catch {
    return '(no log)';
  }
}

/** A daemon exited while we were still bringing the server up. */
class DaemonExitedError extends Error {}

function exitPromise(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.once('error', () => resolve()); // could not be spawned at all
  });
}

export async function startRadosgw(opts: RadosgwOptions = {}): Promise<RadosgwServer> {
  const log = opts.log ?? (() => {});
  const addresses = opts.addresses ?? ['127.0.0.1'];
  if (addresses.length === 0) throw new Error('startRadosgw: addresses must not be empty');
  const extraPorts = opts.extraPorts ?? [];
  const maxConcurrentRequests = opts.maxConcurrentRequests ?? 1024;
  const memstoreBytes = opts.memstoreBytes ?? 8 * 1024 ** 3;

  // Fail before creating anything if an explicitly requested port is taken.
  const tlsExtraPorts = opts.tls?.extraPorts ?? [];
  const explicitPorts = [
    ...(opts.port === undefined ? [] : [opts.port]),
    ...extraPorts,
    ...(opts.tls?.port === undefined ? [] : [opts.tls.port]),
    ...tlsExtraPorts,
  ];
  for (const address of addresses) {
    for (const port of explicitPorts) {
      if ((await listenOnce(address, port)) === undefined) {
        throw new Error(`startRadosgw: cannot listen on ${hostPort(address, port)} (in use, or address not configured)`);
      }
    }
  }
  const port = opts.port ?? (await findFreePort(addresses));
  const tlsPort = opts.tls ? (opts.tls.port ?? (await findFreePort(addresses, [port]))) : undefined;
  const monPort = await findFreePort(['127.0.0.1']);

  let dir: string;
  if (opts.dir === undefined) {
    dir = mkdtempSync(join(tmpdir(), 's3x-radosgw-'));
  } else {
    dir = opts.dir;
    mkdirSync(dir, { recursive: true });
  }
  for (const sub of ['mon', 'osd', 'rgw', 'run', 'crash']) mkdirSync(join(dir, sub), { recursive: true });

  const instance: Instance = { children: new Set(), dir };
  installExitHandler();
  liveInstances.add(instance);
  const daemons: Daemon[] = [];
  const conf = join(dir, 'ceph.conf');
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

  /** Every process we started (daemons and tools still running), until it exits. */
  const track = (child: ChildProcess) => {
    instance.children.add(child);
    void exitPromise(child).then(() => instance.children.delete(child));
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const children = [...instance.children];
      for (const child of children) {
        // Daemons are unref'd (below); while we wait for them they must keep
        // the event loop alive, or Node could exit before their 'exit' event.
        child.ref();
        killQuietly(child);
      }
      // SIGKILL cannot be ignored, but a process stuck in the kernel (D state)
      // can take a while to go; don't hang a test run on it.
      await Promise.race([Promise.all(children.map(exitPromise)), sleep(10_000, { unref: true })]);
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
      liveInstances.delete(instance);
    })();
    return stopping;
  };

  const daemonLogs = (lines: number) =>
    daemons.map((d) => `--- ${d.logFile}:\n${readTail(d.logFile, lines)}`).join('\n');

  // A daemon that exits during start-up will not come back: fail at once with
  // its log instead of waiting for the timeout. Every start-up step races
  // against `died`.
  let starting = true;
  let reportDeath: (error: Error) => void = () => {};
  const died = new Promise<never>((_, reject) => {
    reportDeath = reject;
  });
  died.catch(() => {}); // rejections are handled where `died` is raced
  const step = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, died]);

  /** Run a one-shot tool; on failure the error carries its output and the daemons' logs. */
  const runTool = (name: string, args: string[]): Promise<string> =>
    step(
      new Promise((resolve, reject) => {
        const timeout = Math.max(1000, deadline - Date.now());
        const child = execFile(findExecutable(name) ?? name, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
          if (error) {
            reject(
              new Error(
                `${name} ${args.join(' ')} failed: ${error.message}\n${tail(`${stdout}\n${stderr}`, 20)}\n${daemonLogs(10)}`,
              ),
            );
          } else {
            resolve(stdout);
          }
        });
        track(child);
      }),
    );

  const startDaemon = (name: string, bin: string, args: string[]): Daemon => {
    // -f: stay in the foreground (so the pid is ours) but log to 'log file'.
    // Whatever still goes to stdout/stderr lands in NAME.out.
    const logFile = join(dir, `${name}.log`);
    const outFile = join(dir, `${name}.out`);
    const out = openSync(outFile, 'a');
    const child = spawn(findExecutable(bin) ?? bin, ['-f', '-c', conf, ...args], { stdio: ['ignore', out, out] });
    closeSync(out);
    // A forgotten server must not keep the test process alive; the exit
    // handler kills it then.
    child.unref();
    track(child);
    const onDeath = (why: string) => {
      if (starting) {
        reportDeath(
          new DaemonExitedError(`${name} ${why} during start-up; ${logFile}:\n${readTail(logFile)}\n--- ${outFile}:\n${readTail(outFile, 10)}`),
        );
      }
    };
    child.once('exit', (code, signal) => onDeath(`exited (${code ?? signal})`));
    child.once('error', (error) => onDeath(`failed to start (${error.message})`));
    const daemon = { name, child, logFile };
    daemons.push(daemon);
    return daemon;
  };

  try {
    const fsid = randomUUID();
    const frontends = addresses.flatMap((a) => [port, ...extraPorts].map((p) => hostPort(a, p)));
    const tlsFrontends =
      opts.tls && tlsPort !== undefined
        ? [
            ...addresses.flatMap((a) => [tlsPort, ...tlsExtraPorts].map((p) => `ssl_endpoint=${hostPort(a, p)}`)),
            `ssl_certificate=${opts.tls.certFile}`,
            `ssl_private_key=${opts.tls.keyFile}`,
          ]
        : [];
    writeFileSync(conf, cephConf({ dir, fsid, monPort, frontends, tlsFrontends, maxConcurrentRequests, memstoreBytes, tcpNoDelay: opts.tcpNoDelay }));
    log(`radosgw: starting in ${dir} (S3 port ${port}, mon port ${monPort})`);

    // Monitor: a monmap naming our one mon at its port, then a fresh store.
    const monmap = join(dir, 'monmap');
    await runTool('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, monmap]);
    await runTool('ceph-mon', ['-c', conf, '--mkfs', '-i', 'a', '--monmap', monmap]);
    startDaemon('mon.a', 'ceph-mon', ['-i', 'a']);

    // OSD: register it with the mon (this also waits for the mon to be up),
    // create the memstore, start it. It joins the CRUSH map when it boots.
    const osdUuid = randomUUID();
    const connectTimeout = String(Math.ceil((deadline - Date.now()) / 1000));
    const osdId = (
      await runTool('ceph', ['-c', conf, '--connect-timeout', connectTimeout, 'osd', 'new', osdUuid])
    ).trim();
    await runTool('ceph-osd', ['-c', conf, '-i', osdId, '--mkfs', '--osd-uuid', osdUuid]);
    startDaemon(`osd.${osdId}`, 'ceph-osd', ['-i', osdId]);
    log(`radosgw: mon and osd started (${elapsed()})`);

    // The S3 user. radosgw-admin also creates the zone and the rgw pools,
    // waiting for the OSD to come up; radosgw then finds them ready.
    await runTool('radosgw-admin', [
      '-c', conf, 'user', 'create', '--uid', 's3x', '--display-name', 's3x tests',
      '--access-key', ACCESS_KEY_ID, '--secret', SECRET_ACCESS_KEY,
    ]);
    const rgw = startDaemon('client.rgw', 'radosgw', ['-n', 'client.rgw']);
    log(`radosgw: user created, radosgw started (${elapsed()})`);

    const endpoint = `http://${hostPort(addresses[0], port)}`;
    await waitForS3(endpoint, deadline, step, () => `${rgw.logFile}:\n${readTail(rgw.logFile)}`);
    starting = false;
    log(`radosgw: ready at ${endpoint} (${elapsed()})`);

    return {
      endpoint,
      port,
      tlsEndpoint: tlsPort === undefined ? undefined : `https://${hostPort(addresses[0], tlsPort)}`,
      addresses: [...addresses],
      accessKeyId: ACCESS_KEY_ID,
      secretAccessKey: SECRET_ACCESS_KEY,
      region: REGION,
      dir,
      pids: () => daemons.flatMap((d) => (d.child.pid === undefined ? [] : [d.child.pid])),
      stop,
    };
  } catch (error) {
    starting = false;
    await stop().catch(() => {});
    throw error;
  }
}

/**
 * Wait until an authenticated S3 request succeeds, then exercise the write
 * paths once. That first bucket, object and multipart upload make radosgw
 * create its index, data and multipart pools now rather than inside the
 * first test or benchmark run.
 */
async function waitForS3(
  endpoint: string,
  deadline: number,
  step: <T>(promise: Promise<T>) => Promise<T>,
  rgwLog: () => string,
): Promise<void> {
  const client = new S3Client({
    endpoint,
    region: REGION,
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
  const message = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  // Each request gets its own time limit, never beyond the overall deadline.
  const limit = () => ({ abortSignal: AbortSignal.timeout(Math.max(1000, Math.min(10_000, deadline - Date.now()))) });
  try {
    for (;;) {
      try {
        await step(client.send(new ListBucketsCommand({}), limit()));
        break;
      } catch (error) {
        if (error instanceof DaemonExitedError) throw error;
        if (Date.now() > deadline) {
          throw new Error(
            `radosgw did not answer S3 within ${STARTUP_TIMEOUT_MS / 1000} s (last error: ${message(error)}); ${rgwLog()}`,
          );
        }
      }
      await step(sleep(100));
    }

    const Bucket = `s3x-warmup-${randomUUID()}`;
    const Key = 'warmup';
    try {
      await step(client.send(new CreateBucketCommand({ Bucket }), limit()));
      await step(client.send(new PutObjectCommand({ Bucket, Key, Body: 'warmup' }), limit()));
      await step(client.send(new DeleteObjectCommand({ Bucket, Key }), limit()));
      const { UploadId } = await step(client.send(new CreateMultipartUploadCommand({ Bucket, Key }), limit()));
      await step(client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }), limit()));
      await step(client.send(new DeleteBucketCommand({ Bucket }), limit()));
    } catch (error) {
      if (error instanceof DaemonExitedError) throw error;
      throw new Error(`radosgw answers but the warm-up requests failed (${message(error)}); ${rgwLog()}`);
    }
  } finally {
    client.destroy();
  }
}
