import type * as ChildProcess from "node:child_process";
import { fstatSync } from "node:fs";
import { createRequire } from "node:module";

// node:child_process is loaded only for a pipe: it costs ~2 ms of every start-up.
const require = createRequire(import.meta.url);

/** fcntl's F_SETPIPE_SZ on Linux. */
const F_SETPIPE_SZ = 1031;
/** What an unprivileged process may ask for (/proc/sys/fs/pipe-max-size's default). */
const WIDE_PIPE_BYTES = 1024 * 1024;

/**
 * Widens the pipe on `fd` (stdin, stdout, or a named pipe s3x opened) from
 * Linux's 64 KiB to 1 MiB.
 *
 * Through a 64 KiB pipe, the writer and the reader take turns every few
 * pages: a 1 GiB `cp s3://… - | openssl dgst` spent 3.32–4.02 s, and
 * 3.12–3.32 s with a 1 MiB pipe (5 interleaved pairs). Node has no fcntl,
 * so a perl one-liner does it on the descriptor, handed to it as its
 * stdout: the capacity belongs to the pipe, shared by every process that
 * has either end open. perl is part of every Debian-based system
 * (perl-base is essential); where it is missing, or the kernel refuses (a
 * per-user limit on pipe memory), the pipe simply stays as it was. The
 * child runs while the first request is in flight and is never waited for.
 */
export function widenPipe(fd: number): void {
  if (process.platform !== "linux") return;
  try {
    if (!fstatSync(fd).isFIFO()) return;
  } catch {
    return;
  }
  try {
    const { spawn } = require("node:child_process") as typeof ChildProcess;
    const child = spawn("perl", ["-e", `fcntl(STDOUT, ${F_SETPIPE_SZ}, ${WIDE_PIPE_BYTES})`], { stdio: ["ignore", fd, "ignore"] });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No process to spare: the pipe keeps its size.
  }
}
