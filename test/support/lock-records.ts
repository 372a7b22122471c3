import { spawn } from "node:child_process";
import { hostname } from "node:os";
import type { LockHolder } from "../../src/engine/locks/exclusive-lock.js";

/** The pid of a process that has exited (its exit awaited, so the pid is certainly dead). */
export function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(child.pid!));
  });
}

/** A lock file's text: this process's record, with `fields` changed. */
export function holder(fields: Partial<LockHolder>): string {
  return JSON.stringify({ pid: process.pid, host: hostname(), command: process.argv[1], started: "2026-01-01T00:00:00.000Z", temp: ".f.00000000.s3x-part", ...fields }) + "\n";
}
