import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileHash, randomFile, S3X_BIN } from "../support/cli.js";
import { freshBucket, objectHash, testS3, type TestS3 } from "../support/s3-server.js";
import { startThrottleProxy, type ThrottleProxy } from "../support/throttle-proxy.js";
import { openTerminal, PROMPT, type Terminal } from "../support/tmux.js";

const MiB = 1024 * 1024;
const REPO = dirname(dirname(S3X_BIN));

/**
 * The bundle as users run it: bin/s3x.js, dist/s3x.cjs (+ its code cache)
 * dist/s3x-credentials.cjs (the SDK's credential chain, loaded on demand) and
 * dist/s3x-worker.cjs (the data-plane worker threads' code)
 * copied into a directory of their own, beside package.json and the one
 * module the bundle leaves out (@node-rs/crc32, a native addon). There is no
 * dist/src/ there, so bin/s3x.js cannot fall back to the unbundled modules:
 * every run below goes through the bundle and its shims (scripts/*-lean.cjs;
 * one of the bundle's shims broke the terminal progress bar once), and the
 * credential chain it loads on demand.
 */
async function installBundleAlone(dir: string): Promise<string> {
  const bundle = join(REPO, "dist", "s3x.cjs");
  assert.ok(existsSync(bundle), `${bundle} is missing: npm run build makes it`);
  await mkdir(join(dir, "bin"), { recursive: true });
  await mkdir(join(dir, "dist"));
  await mkdir(join(dir, "node_modules"));
  await copyFile(join(REPO, "bin", "s3x.js"), join(dir, "bin", "s3x.js"));
  // It makes bin/s3x.js CommonJS inside a "type": "module" package.
  await copyFile(join(REPO, "bin", "package.json"), join(dir, "bin", "package.json"));
  await copyFile(bundle, join(dir, "dist", "s3x.cjs"));
  if (existsSync(`${bundle}.cache`)) await copyFile(`${bundle}.cache`, join(dir, "dist", "s3x.cjs.cache"));
  await copyFile(join(REPO, "dist", "s3x-credentials.cjs"), join(dir, "dist", "s3x-credentials.cjs"));
  await copyFile(join(REPO, "dist", "s3x-worker.cjs"), join(dir, "dist", "s3x-worker.cjs"));
  await copyFile(join(REPO, "package.json"), join(dir, "package.json"));
  await symlink(join(REPO, "node_modules", "@node-rs"), join(dir, "node_modules", "@node-rs"), "dir");
  return join(dir, "bin", "s3x.js");
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBin(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c));
    child.stderr.on("data", (c: Buffer) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the bundled CLI (bin/s3x.js + dist/s3x.cjs, installed without dist/src/)", function () {
  this.timeout(180_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let bin: string;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "bundle");
    dir = await mkdtemp(join(tmpdir(), "s3x-bundled-"));
    bin = await installBundleAlone(join(dir, "install"));
    assert.ok(!existsSync(join(dir, "install", "dist", "src")));
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("prints its version and its help", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
    const shown = await runBin(bin, ["--version"], s3.env);
    assert.deepEqual([shown.code, shown.stdout.trim(), shown.stderr], [0, version, ""]);
    // --help lays text out through the lazily loaded string-width (bundle.mjs's lazy-string-width).
    const help = await runBin(bin, ["cp", "--help"], s3.env);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /--recursive/);
  });

  it("uploads a multipart object and downloads it again; a profile's credentials come through the SDK's chain, loaded on demand", async () => {
    const source = join(dir, "big.bin");
    const hash = await randomFile(source, 12 * MiB);
    const up = await runBin(bin, ["cp", source, `s3://${bucket}/big.bin`, "--part-size", "5MiB", "--multipart-threshold", "5MiB", "--no-progress"], s3.env);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(await objectHash(s3, bucket, "big.bin"), hash);
    const target = join(dir, "down.bin");
    const down = await runBin(bin, ["cp", `s3://${bucket}/big.bin`, target, "--part-size", "5MiB", "--no-progress", "--workers", "2", "--debug"], s3.env);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(await fileHash(target), hash);
    // The ranges went through the bundled worker code (dist/s3x-worker.cjs).
    assert.match(down.stderr, /debug: worker thread 0 started/);
    assert.doesNotMatch(down.stderr, /exited with code/);
    // An install that lacks the worker's code still downloads, on one thread.
    const workerCode = join(dir, "install", "dist", "s3x-worker.cjs");
    await rm(workerCode);
    try {
      const alone = await runBin(bin, ["cp", `s3://${bucket}/big.bin`, target, "--part-size", "5MiB", "--no-progress", "--workers", "2", "--debug"], s3.env);
      assert.equal(alone.code, 0, alone.stderr);
      assert.match(alone.stderr, /no worker thread code beside the program/);
      assert.equal(await fileHash(target), hash);
    } finally {
      await copyFile(join(REPO, "dist", "s3x-worker.cjs"), workerCode);
    }
    // No keys in the environment: the profile's, read by @aws-sdk/credential-provider-node inside the bundle.
    const credentials = join(dir, "credentials");
    await writeFile(credentials, `[bundle]\naws_access_key_id = ${s3.env.AWS_ACCESS_KEY_ID}\naws_secret_access_key = ${s3.env.AWS_SECRET_ACCESS_KEY}\n`);
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, ...withoutKeys } = s3.env;
    const listed = await runBin(bin, ["ls", `s3://${bucket}/`], { ...withoutKeys, AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_CONFIG_FILE: join(dir, "no-config"), AWS_PROFILE: "bundle" });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /big\.bin/);
  });

  describe("on a terminal (tmux)", () => {
    let proxy: ThrottleProxy;
    let terminal: Terminal;

    before(async () => {
      // Slowed down so the progress line is on screen long enough to be seen.
      proxy = await startThrottleProxy(s3.host, s3.port, 6 * MiB);
      terminal = await openTerminal({ ...s3.env, S3X_STATE_DIR: join(dir, "state") }, { columns: 80, rows: 40 });
      await terminal.run(`cd ${dir}`);
    });

    after(async () => {
      await terminal?.close();
      await proxy?.close();
    });

    it("draws the progress line while it uploads, then leaves only the upload's line and the prompt", async () => {
      await randomFile(join(dir, "shown.bin"), 24 * MiB);
      let drawn: string[] = [];
      const command = `node ${bin} cp shown.bin s3://${bucket}/shown.bin --part-size 5MiB --multipart-threshold 5MiB --concurrency 2 --endpoint-url ${proxy.endpoint}; echo "exit=$?"`;
      await terminal.run(command, {
        whileRunning: async (t) => {
          drawn = await t.waitForScreen((lines) => lines.some((l) => /[0-9.]+ MiB \/ [0-9.]+ MiB/.test(l)));
        },
      });
      assert.ok(drawn.length > 0);
      const lines = await terminal.screen();
      let at = lines.length - 1;
      while (at >= 0 && !(lines[at].startsWith(PROMPT) && lines[at].includes("shown.bin"))) at--;
      assert.ok(at >= 0, `the command line is on the screen:\n${lines.join("\n")}`);
      assert.deepEqual(lines.slice(at + 1), [`upload: ./shown.bin to s3://${bucket}/shown.bin`, "exit=0", PROMPT.trimEnd()], lines.join("\n"));
    });
  });
});
