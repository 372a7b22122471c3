import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FileTlsSessionStore } from "../../net/pools.js";
import type { S3Settings } from "../../s3/client.js";
import type { WorkerSetup } from "./protocol.js";

/** How a data-plane worker thread is started: its code, and the settings it may be given. */

/**
 * The settings as a worker is given them: without what cannot cross threads
 * (the debug callback; the parsed TLS context, which workers make from the
 * PEM text), and with the session store as where it is, for the worker to
 * open it too.
 */
export function portableSetup(settings: S3Settings): Pick<WorkerSetup, "settings" | "keptSessions"> {
  const { debug: _debug, onAddressBad: _onAddressBad, tls, ...net } = settings.net;
  const sessions = tls?.sessions;
  return {
    settings: { ...settings, net: { ...net, tls: tls && { verify: tls.verify, ca: tls.ca } } },
    keptSessions: sessions instanceof FileTlsSessionStore ? sessions.location : undefined,
  };
}

/**
 * The worker's script: beside the bundle (dist/s3x-worker.cjs, scripts/bundle.mjs)
 * when s3x runs bundled, else the compiled module beside this one.
 */
export function workerScript(): string | undefined {
  const here = fileURLToPath(import.meta.url);
  const script = here.endsWith(".cjs") ? join(dirname(here), "s3x-worker.cjs") : join(dirname(here), "worker-thread.js");
  return existsSync(script) ? script : undefined;
}
