import { readFileSync } from "node:fs";

/**
 * This process's peak resident memory. /proc's VmHWM belongs to this program
 * image; getrusage's maxRSS also counts the parent's RSS from before exec,
 * which would blame s3x for a big parent's memory.
 */
export function peakRss(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS * 1024;
}
