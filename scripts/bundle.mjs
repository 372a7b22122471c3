// Bundles the compiled CLI (dist/src/cli/main.js) into dist/s3x.cjs, then runs
// it once so bin/s3x.js writes V8's code cache for it (dist/s3x.cjs.cache).
//
// Why CommonJS: Node 20 has no compile cache for ES modules (module.enableCompileCache
// arrived in Node 22), but a CommonJS bundle can be compiled through vm.Script
// with `cachedData`, which skips parsing and compiling the ~2.6 MB bundle and
// every function the warm-up run compiled. Start-up matters: a no-op sync or a
// listing is over in well under a second.
import { build } from "esbuild";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outfile = join(root, "dist", "s3x.cjs");
/** The AWS SDK's credential chain, a bundle of its own beside the main one (see below). */
const credentialsFile = join(root, "dist", "s3x-credentials.cjs");

/**
 * What every bundle here is: CommonJS for Node 20, with less text to read,
 * hash and keep in memory at every start (names stay as written, so stack
 * traces still name functions).
 */
const NODE_BUNDLE = { bundle: true, platform: "node", format: "cjs", target: "node20", logLevel: "warning", minifyWhitespace: true, minifySyntax: true, legalComments: "none" };
// Some dependencies (yargs-parser), and s3x's own modules, ask import.meta.url for a createRequire base or a path.
const IMPORT_META_URL = {
  define: { "import.meta.url": "__s3xImportMetaUrl" },
  banner: { js: "var __s3xImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
};

await build({
  ...NODE_BUNDLE,
  ...IMPORT_META_URL,
  entryPoints: [join(root, "dist", "src", "cli", "main.js")],
  mainFields: ["module", "main"],
  outfile,
  // A native addon (CRC32C): loaded from node_modules at run time, never bundled.
  external: ["@node-rs/crc32"],
  plugins: [
    {
      // The SDK's credential chain (SSO, STS, IMDS, credential_process… with
      // their own HTTP clients: a third of the program's code) is needed only
      // when a profile supplies the credentials, never with keys in the
      // environment. It lives in a file of its own, loaded at first use, so
      // other runs neither read nor compile it.
      name: "credential-chain-apart",
      setup(b) {
        // A stub in the main bundle (so `import()` of it stays a plain require inside
        // the bundle, which vm.Script can run) that requires the file beside it.
        b.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, () => ({ path: "credential-chain", namespace: "credential-chain-apart" }));
        b.onLoad({ filter: /.*/, namespace: "credential-chain-apart" }, () => ({ contents: `module.exports = require("./s3x-credentials.cjs");\n`, loader: "js" }));
        b.onResolve({ filter: /^\.\/s3x-credentials\.cjs$/ }, () => ({ path: "./s3x-credentials.cjs", external: true }));
      },
    },
    {
      // string-width (three copies, under yargs, cliui and wrap-ansi) builds
      // Unicode property regexes and an Intl.Segmenter when loaded: ~30 ms of
      // every start-up, for measuring text only --help and errors ever lay
      // out. Each copy is loaded at its first use instead.
      name: "lazy-string-width",
      setup(b) {
        b.onResolve({ filter: /^string-width$/ }, async (args) => {
          if (args.pluginData === "real") return undefined;
          const real = await b.resolve("string-width", { resolveDir: args.resolveDir, kind: args.kind, pluginData: "real" });
          if (real.errors.length > 0) return { errors: real.errors };
          return { path: real.path, namespace: "lazy-string-width" };
        });
        // CommonJS, so both `import stringWidth from` (yargs, cliui) and
        // `require("string-width")` (cli-progress, which calls the module
        // itself) get the function.
        b.onLoad({ filter: /.*/, namespace: "lazy-string-width" }, (args) => ({
          contents:
            `let real;\n` +
            `function stringWidth(text, options) {\n` +
            `  if (!real) { const m = require(${JSON.stringify(args.path)}); real = typeof m === "function" ? m : m.default; }\n` +
            `  return real(text, options);\n` +
            `}\n` +
            `module.exports = stringWidth;\n` +
            `module.exports.default = stringWidth;\n`,
          loader: "js",
          resolveDir: dirname(args.path),
        }));
      },
    },
    {
      name: "lean-yargs-assert",
      setup(b) {
        b.onResolve({ filter: /^assert$/ }, (args) =>
          /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]/.test(args.importer) ? { path: join(root, "scripts", "assert-lean.cjs") } : undefined,
        );
      },
    },
  ],
});
await build({
  ...NODE_BUNDLE,
  entryPoints: [join(root, "node_modules", "@aws-sdk", "credential-provider-node", "dist-cjs", "index.js")],
  outfile: credentialsFile,
});

// The data-plane worker thread (src/engine/workers/worker-thread.ts): a bundle of its
// own, loaded only when a run starts worker threads (engine/workers/pool.ts finds it
// beside dist/s3x.cjs).
await build({
  ...NODE_BUNDLE,
  ...IMPORT_META_URL,
  entryPoints: [join(root, "dist", "src", "engine", "workers", "worker-thread.js")],
  mainFields: ["module", "main"],
  outfile: join(root, "dist", "s3x-worker.cjs"),
  // A worker never runs the credential chain (the main thread hands it credentials): left out.
  external: ["@node-rs/crc32", "@aws-sdk/credential-provider-node", "@aws-sdk/credential-provider-env"],
});

// The bundle of earlier builds (ES module) must not shadow the new one.
rmSync(join(root, "dist", "s3x.mjs"), { force: true });
rmSync(`${outfile}.cache`, { force: true });

// Warm-up: V8's code cache holds every function a run compiled, so the runs
// that write it should go the way users' short commands go. A local
// stand-in for S3 (serveWarmUp below: a listing and a 1-byte object, plain
// HTTP, nothing else) answers `ls` and then a one-object `cat` (the
// \`pipe:\` pattern's process per shard); the second run starts from the
// first's cache and writes it back with its own functions added. A
// one-object cat over HTTPS costs ~4 ms less CPU than with a cache from a
// failed listing alone (bench/README.md, 2026-11-28).
const server = await serveWarmUp();
const endpoint = `http://127.0.0.1:${server.address().port}`;
let warmFailure = "";
for (const args of [["ls", "s3://s3x-warm-up/"], ["cat", "s3://s3x-warm-up/one"]]) {
  const result = await runWarmUp([...args, "--endpoint-url", endpoint, "--max-attempts", "1", "--no-progress"]);
  if (result.code !== 0) warmFailure += `${args.join(" ")}: exit ${result.code}: ${result.stderr.trim()} `;
}
server.close();
// Without the cache s3x still works, only its start-up is slower: say so, do not fail the build.
if (!existsSync(`${outfile}.cache`) || warmFailure) console.warn(`bundle: the V8 code cache warm-up did not go as planned: ${warmFailure || "no cache written"}`);

/** Runs bin/s3x.js with ARGS, writing the code cache at exit; resolves with its exit code and stderr. */
function runWarmUp(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "bin", "s3x.js"), ...args], {
      env: {
        ...process.env,
        S3X_WRITE_CODE_CACHE: "1",
        S3X_TLS_SESSION_CACHE: "off",
        AWS_ACCESS_KEY_ID: "warmup",
        AWS_SECRET_ACCESS_KEY: "warmup",
        AWS_REGION: "us-east-1",
        AWS_PROFILE: "",
        AWS_CONFIG_FILE: "/nonexistent",
        AWS_SHARED_CREDENTIALS_FILE: "/nonexistent",
      },
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 60_000,
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** A stand-in for S3 on a free local port: a ListObjectsV2 page of one key, and that key's one byte. */
function serveWarmUp() {
  const body = "x";
  const listing =
    '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>s3x-warm-up</Name><Prefix></Prefix>' +
    "<KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>" +
    '<Contents><Key>one</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"9dd4e461268c8034f5c8564e155c67a6"</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>';
  const server = createServer((req, res) => {
    const common = { "x-amz-request-id": "warm-up", "last-modified": "Thu, 01 Jan 2026 00:00:00 GMT" };
    if (req.url.includes("list-type=2")) {
      res.writeHead(200, { ...common, "content-type": "application/xml", "content-length": Buffer.byteLength(listing) });
      res.end(listing);
    } else if (req.url.startsWith("/s3x-warm-up/one")) {
      const ranged = req.headers.range !== undefined;
      res.writeHead(ranged ? 206 : 200, {
        ...common,
        etag: '"9dd4e461268c8034f5c8564e155c67a6"',
        "content-type": "application/octet-stream",
        "content-length": 1,
        ...(ranged ? { "content-range": "bytes 0-0/1" } : {}),
      });
      res.end(req.method === "HEAD" ? undefined : body);
    } else {
      res.writeHead(404, { ...common, "content-type": "application/xml" });
      res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>warm-up</Message></Error>');
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}
