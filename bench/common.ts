import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureRadosgwInstalled, startRadosgw, type RadosgwOptions, type RadosgwServer } from "../test/support/radosgw.js";

/** The CLI under test, as users run it. */
export const S3X_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "s3x.js");

/** `--name N` from the command line, or the fallback. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/**
 * Runs a benchmark body against a fresh radosgw (memstore) and a scratch
 * directory, and always stops the server and removes the directory.
 */
export function runBench(body: (server: RadosgwServer, dir: string) => Promise<void>, options: RadosgwOptions = {}): void {
  const main = async (): Promise<void> => {
    ensureRadosgwInstalled((l) => console.error(`[radosgw] ${l}`));
    const server = await startRadosgw(options);
    const dir = await mkdtemp(join(tmpdir(), "s3x-bench-"));
    try {
      await body(server, dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await server.stop();
    }
  };
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
