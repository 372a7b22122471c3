import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { S3Settings } from "../../s3/client.js";

/** How a data-plane worker thread is started: its code, and the settings it may be given. */

/** The settings without what cannot cross threads: the debug callback and the parsed TLS context (workers make theirs from the PEM text). */
export function portableSettings(settings: S3Settings): S3Settings {
  const { debug: _debug, onAddressBad: _onAddressBad, tls, ...net } = settings.net;
  return { ...settings, net: { ...net, tls: tls && { verify: tls.verify, ca: tls.ca } } };
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
