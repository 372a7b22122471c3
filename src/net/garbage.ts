import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Every socket read gives undici a fresh Buffer; after s3x copies it into a
 * part buffer it is garbage. Each such Buffer is a tiny JS object over a
 * large off-heap backing store, so V8's young generation barely fills and
 * its external-memory heuristic lets well over 100 MiB of dead socket
 * buffers pile up during a download: peak RSS then grows with the object
 * size instead of staying within --max-memory. A minor GC every few dozen
 * MiB received (well under a millisecond each) keeps that garbage bounded.
 */
const COLLECT_EVERY_BYTES = 32 * 1024 * 1024;

type MinorGc = (options: { type: "minor" }) => void;
let collect: MinorGc | undefined | null;
let sinceLastCollect = 0;

function loadGc(): MinorGc | null {
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as MinorGc;
  } catch {
    return null;
  }
}

/** Records `bytes` of socket data consumed; collects young garbage now and then. */
export function noteSocketBytes(bytes: number): void {
  sinceLastCollect += bytes;
  if (sinceLastCollect < COLLECT_EVERY_BYTES) return;
  sinceLastCollect = 0;
  if (collect === undefined) collect = loadGc();
  collect?.({ type: "minor" });
}
