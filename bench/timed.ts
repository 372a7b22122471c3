import { spawn } from "node:child_process";
import { serverCpuSeconds } from "./common.js";

/** One timed run of a command: wall, client CPU (user + sys) and peak RSS, server CPU. */
export interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
  serverCpu: number;
}

/**
 * Runs a shell command whose measured program is prefixed with
 * `/usr/bin/time -f "TIME %U %S %M"` (see TIME_PREFIX); returns its sample
 * and stdout. Asynchronous, so servers in this process (a test proxy) keep
 * answering while it runs.
 */
export function timed(command: string, env: NodeJS.ProcessEnv, serverPids: number[]): Promise<{ sample: Sample; stdout: string }> {
  const before = serverCpuSeconds(serverPids);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (status) => {
      const wall = Number(process.hrtime.bigint() - started) / 1e9;
      const serverCpu = serverCpuSeconds(serverPids) - before;
      const match = /TIME (\S+) (\S+) (\d+)/.exec(stderr);
      if (status !== 0 || !match) return reject(new Error(`benchmark command failed (${status}): ${command}\n${stderr}`));
      resolve({ sample: { wall, cpu: Number(match[1]) + Number(match[2]), rssMiB: Number(match[3]) / 1024, serverCpu }, stdout });
    });
  });
}

export const TIME_PREFIX = `/usr/bin/time -f "TIME %U %S %M"`;
