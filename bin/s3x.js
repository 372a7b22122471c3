#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm run build`: dist/s3x.mjs is the whole
// program bundled into one file (start-up reads one file instead of ~900),
// dist/src/ the plain compiled modules it falls back to.
import { existsSync } from "node:fs";

// The AWS SDK warns on every run that future releases will need Node 22;
// s3x pins an SDK release that supports Node 20, so the warning is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

// yargs reads process.stdout.columns while loading. Touching process.stdout
// makes Node open fd 1 as a libuv pipe, which switches the pipe to
// non-blocking mode; s3x's stdout writer (engine/sinks/fd-writer) then meets
// EAGAIN on every full pipe instead of writing 8 MiB parts in one blocking
// write from the thread pool. So stdout stays untouched while modules load.
const stdoutDescriptor = Object.getOwnPropertyDescriptor(process, "stdout");
Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, value: { columns: undefined, isTTY: false } });
const bundle = new URL("../dist/s3x.mjs", import.meta.url);
let entry;
try {
  entry = await import(existsSync(bundle) ? bundle.href : "../dist/src/cli/main.js");
} finally {
  Object.defineProperty(process, "stdout", stdoutDescriptor);
}
entry.run();
