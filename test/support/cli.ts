import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
/** The real CLI binary, as users run it. */
export const S3X_BIN = join(here, "..", "..", "..", "bin", "s3x.js");

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  /** Milliseconds from the last bytes on stderr (its final error) to the process's exit; undefined without stderr. */
  lingerMs?: number;
}

/** Once s3x has printed its final error it exits at once (issue #35): within 2 s, whatever connections are open. */
export const EXIT_AFTER_ERROR_MS = 2_000;

/** Asserts that a run which printed an error exited within EXIT_AFTER_ERROR_MS of printing it. */
export function assertExitedPromptly(res: RunResult): void {
  if (res.lingerMs === undefined) return;
  if (res.lingerMs > EXIT_AFTER_ERROR_MS) throw new Error(`s3x exited ${Math.round(res.lingerMs)} ms after printing its error (at most ${EXIT_AFTER_ERROR_MS} ms): ${res.stderr}`);
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  stdin?: Buffer | "inherit-none";
  /** Called once the process is running (to feed stdin slowly, send signals…). */
  onSpawn?: (child: ChildProcess) => void;
  timeoutMs?: number;
  /** Working directory (default: the test process's). */
  cwd?: string;
}

/** Runs `s3x ARGS…` to completion, capturing stdout as bytes. */
export function runS3x(args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise<RunResult>((resolve, reject) => {
    const child = spawn(process.execPath, [S3X_BIN, ...args], { env: options.env, cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    let lastErrAt: number | undefined;
    let exitedAt: number | undefined;
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
      lastErrAt = performance.now();
    });
    child.on("exit", () => (exitedAt = performance.now()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const lingerMs = lastErrAt !== undefined && exitedAt !== undefined ? Math.max(0, exitedAt - lastErrAt) : undefined;
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err, lingerMs });
    });
    child.stdin.on("error", () => undefined);
    if (options.onSpawn) options.onSpawn(child);
    else if (options.stdin instanceof Buffer) child.stdin.end(options.stdin);
    else child.stdin.end();
  });
}

export function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export async function fileHash(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Writes `size` random bytes to `path` and returns their hash. */
export async function randomFile(path: string, size: number): Promise<string> {
  const data = randomBytes(size);
  await writeFile(path, data);
  return sha256(data);
}

/** Runs a bash pipeline (e.g. `s3x … | head -1`) and returns what it printed on stdout and stderr. */
export function runPipeline(script: string, env: NodeJS.ProcessEnv): Promise<{ out: string; err: string }> {
  return new Promise((resolve) => {
    const sh = spawn("bash", ["-c", script], { env });
    let out = "";
    let err = "";
    sh.stdout.on("data", (c: Buffer) => (out += c));
    sh.stderr.on("data", (c: Buffer) => (err += c));
    sh.on("close", () => resolve({ out, err }));
  });
}
