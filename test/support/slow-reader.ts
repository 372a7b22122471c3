/**
 * A reader for stdin at `mbps` MB/s (for the first `slowBytes`, then as fast
 * as it can), printing "BYTES SHA256" at the end: a slow consumer for memory
 * checks of streams (test/integration/cat-memory, bench/stream). It paces
 * itself against its own clock on purpose: being slow is the point.
 */
export function slowReaderScript(mbps: number, slowBytes = Number.MAX_SAFE_INTEGER): string {
  return [
    "import sys, time, hashlib",
    "h = hashlib.sha256(); n = 0; start = time.monotonic()",
    "while True:",
    "    b = sys.stdin.buffer.read(1 << 16)",
    "    if not b: break",
    "    h.update(b); n += len(b)",
    `    if n < ${slowBytes}:`,
    `        ahead = n / ${mbps}e6 - (time.monotonic() - start)`,
    "        if ahead > 0: time.sleep(ahead)",
    "print(n, h.hexdigest())",
  ].join("\n");
}
