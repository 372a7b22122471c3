import { spawn } from "node:child_process";
import { fstatSync } from "node:fs";

/** fcntl's F_SETPIPE_SZ on Linux. */
const F_SETPIPE_SZ = 1031;
/** What an unprivileged process may ask for (/proc/sys/fs/pipe-max-size's default). */
const WIDE_PIPE_BYTES = 1024 * 1024;

/**
 * Widens the pipe on `fd` (stdin or stdout) from Linux's 64 KiB to 1 MiB.
 *
 * Through a 64 KiB pipe, the writer and the reader take turns every few
 * pages: a 1 GiB `cp s3://… - | openssl dgst` spent 3.16–3.37 s, and
 * 2.71–2.93 s with a 1 MiB pipe (4 interleaved pairs, bench notes in the
 * README). Node has no fcntl, so a perl one-liner does it: it inherits the
 * descriptor, and the capacity belongs to the pipe, shared by every
 * process that has it open. perl is part of every Debian-based system
 * (perl-base is essential); where it is missing, or the kernel refuses
 * (a per-user limit on pipe memory), the pipe simply stays as it was.
 * The child runs while the first request is in flight and is never waited for.
 */
export function widenPipe(fd: 0 | 1): void {
  if (process.platform !== "linux") return;
  try {
    if (!fstatSync(fd).isFIFO()) return;
  } catch {
    return;
  }
  const handle = fd === 0 ? "STDIN" : "STDOUT";
  const stdio: ["ignore" | number, "ignore" | number, "ignore"] = fd === 0 ? [0, "ignore", "ignore"] : ["ignore", 1, "ignore"];
  try {
    const child = spawn("perl", ["-e", `fcntl(${handle}, ${F_SETPIPE_SZ}, ${WIDE_PIPE_BYTES})`], { stdio });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No perl, or no process to spare: the pipe keeps its size.
  }
}
