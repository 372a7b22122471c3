#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm run build`: dist/s3x.cjs is the whole
// program bundled into one file (start-up reads one file instead of ~900),
// dist/src/ the plain compiled modules it falls back to.
//
// This file is CommonJS (bin/package.json says so): an ES module entry point
// would start Node's ES module loader first, ~8 ms of CPU per command for
// nothing, since the bundle is CommonJS.
"use strict";
const { existsSync, readFileSync, renameSync, writeFileSync, writeSync } = require("node:fs");
const Module = require("node:module");
const { dirname, join } = require("node:path");
const { pathToFileURL } = require("node:url");
const { Script } = require("node:vm");

const root = join(__dirname, "..");

if (process.argv.length === 3 && process.argv[2] === "--version") {
  // `s3x --version` alone is answered before the program (2 MB of JavaScript)
  // loads: scripts and pipelines that check the version pay only Node's start-up.
  writeSync(1, `${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version}\n`);
} else {
  runCli().catch((err) => {
    process.exitCode = 1;
    throw err;
  });
}

/** Loads the program and runs the command line. */
async function runCli() {
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
  const bundle = join(root, "dist", "s3x.cjs");
  let entry;
  try {
    entry = existsSync(bundle) ? loadBundle(bundle) : await import(pathToFileURL(join(root, "dist", "src", "cli", "main.js")).href);
  } finally {
    Object.defineProperty(process, "stdout", stdoutDescriptor);
  }
  entry.run();
}

/**
 * Loads the CommonJS bundle through vm.Script with V8's code cache
 * (dist/s3x.cjs.cache, written by the build's warm-up run): Node 20 has no
 * compile cache of its own, and compiling the bundle is a large part of
 * start-up. A cache from another Node or V8 version is rejected by V8 and the
 * bundle is simply compiled as usual.
 */
function loadBundle(file) {
  const cacheFile = `${file}.cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, cachedData });
  if (process.env.S3X_WRITE_CODE_CACHE === "1") {
    // At exit the cache holds every function the run compiled, not just the top level.
    process.once("exit", () => {
      writeFileSync(`${cacheFile}.tmp`, script.createCachedData());
      renameSync(`${cacheFile}.tmp`, cacheFile);
    });
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dirname(file));
  return module.exports;
}
