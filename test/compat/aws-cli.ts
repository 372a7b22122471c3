/**
 * aws-cli (Debian `awscli`, v2.9) for the compatibility suite: installed with
 * apt when missing (as test/support/radosgw.ts installs Ceph), and run with
 * an environment of its own so that the developer's ~/.aws never takes part.
 */
import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants as fsConstants, mkdtempSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestS3 } from "../support/s3-server.js";

/** The Debian build; another `aws` (pyenv, pip) may come earlier on PATH, so never call it by name. */
export const AWS_CLI = "/usr/bin/aws";
const DEBIAN_PACKAGE = "awscli";

function installed(): boolean {
  try {
    accessSync(AWS_CLI, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** As root, installs the Debian package when /usr/bin/aws is missing; otherwise throws saying what to install. */
export function ensureAwsCliInstalled(log?: (line: string) => void): void {
  if (installed()) return;
  const command = `apt-get install -y --no-install-recommends ${DEBIAN_PACKAGE}`;
  if (process.getuid?.() !== 0) throw new Error(`aws-cli is not installed (no ${AWS_CLI}); run: sudo ${command}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const run = (args: string[]) => spawnSync("apt-get", args, { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  log?.(`aws-cli: ${AWS_CLI} missing; installing ${DEBIAN_PACKAGE}`);
  // A failing mirror makes `apt-get update` exit non-zero although the lists we need may be fine.
  run(["update"]);
  const install = run(["install", "-y", "--no-install-recommends", DEBIAN_PACKAGE]);
  if (install.status !== 0 || !installed()) {
    throw new Error(`\`${command}\` failed (exit ${install.status}): ${(install.stderr ?? "").trim().split("\n").slice(-5).join("\n")}`);
  }
}

export interface AwsCli {
  /** Runs `aws --endpoint-url … s3 ARGS…` in `cwd`, with `stdin` as its standard input (else empty). */
  s3(args: string[], cwd: string, stdin?: Buffer): Promise<CommandResult>;
  /** Removes the throw-away HOME and config. */
  dispose(): Promise<void>;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * aws-cli configured for the test server by environment only: keys and
 * region in variables, path-style addressing in a throw-away config file,
 * HOME a throw-away directory (aws-cli caches there), no pager.
 */
export function awsCliFor(s3: TestS3): AwsCli {
  const home = mkdtempSync(join(tmpdir(), "s3x-compat-aws-"));
  const configFile = join(home, "config");
  writeFileSync(configFile, "[default]\ns3 =\n  addressing_style = path\n");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    TZ: "UTC",
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_DEFAULT_REGION: s3.region,
    AWS_CONFIG_FILE: configFile,
    AWS_SHARED_CREDENTIALS_FILE: join(home, "no-credentials"),
    AWS_PAGER: "",
  };
  return {
    s3: (args, cwd, stdin) => runCommand(AWS_CLI, ["--endpoint-url", s3.endpoint, "s3", ...args], env, cwd, stdin),
    dispose: () => rm(home, { recursive: true, force: true }),
  };
}

/** Runs a command to completion with `stdin` (else an empty stdin), capturing both outputs as text. */
export function runCommand(file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, stdin?: Buffer): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.on("error", () => undefined);
    child.stdin.end(stdin);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
