import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { readImportGraph, readImports } from "./import-reader.js";

/**
 * The request layer of issue #37, checked on the sources:
 *  - one module sends S3 requests (s3/request.ts); the transport is reached
 *    from nowhere else above net/ (s3/client.ts only builds it);
 *  - the AWS SDK is used only through public entry points for what it is
 *    best at (credentials, signing, the shared config files, CRC64), never
 *    its S3 client or its internals; one transport, no undici;
 *  - the request path (s3/, net/) holds no module-level mutable state, so
 *    it can run in any thread.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SRC = join(here, "..", "..", "..", "..", "src");

/** The SDK packages src/ may import, each for one job. */
const SDK_ENTRY_POINTS = new Set([
  "@aws-sdk/credential-provider-node", // the credential chain (SSO, credential_process, web identity, IMDS, role chains)
  "@aws-sdk/credential-provider-env", // keys from the environment alone
  "@smithy/signature-v4", // SigV4
  "@smithy/shared-ini-file-loader", // the shared config and credentials files
  "@aws-sdk/crc64-nvme", // CRC64NVME checksums
]);

/** Module-level values that are mutated in place count as state: these methods and assignments mutate. */
const MUTATORS = ["set", "add", "delete", "clear", "push", "pop", "shift", "unshift", "splice", "fill", "sort"];

function sources(): { file: string; text: string }[] {
  return readImportGraph(SRC).files.map((file) => ({ file, text: readFileSync(join(SRC, file), "utf8") }));
}

/** Top-level `let`/`var`, and top-level consts holding a collection or object that the module mutates. */
export function moduleState(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const flags = statement.declarationList.flags;
    for (const declaration of statement.declarationList.declarations) {
      if (!ts.isIdentifier(declaration.name)) continue;
      const name = declaration.name.text;
      const line = source.getLineAndCharacterOfPosition(declaration.getStart(source)).line + 1;
      if (!(flags & ts.NodeFlags.Const)) {
        found.push(`${file}:${line} ${name} (a module-level let/var)`);
        continue;
      }
      const init = declaration.initializer;
      const container = init && (ts.isNewExpression(init) || ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init));
      if (!container) continue;
      const escaped = name.replace(/[$]/g, "\\$");
      const mutation = new RegExp(`\\b${escaped}(\\.(${MUTATORS.join("|")})\\(|\\[[^\\]]+\\]\\s*=[^=]|\\.[A-Za-z_]+\\s*=[^=])`);
      if (mutation.test(text)) found.push(`${file}:${line} ${name} (mutated in place)`);
    }
  }
  return found;
}

describe("architecture: one request layer (issue #37)", function () {
  this.timeout(60_000);
  let files: { file: string; text: string }[];

  before(() => {
    files = sources();
  });

  it("sends every S3 request from s3/request.ts: nothing else above net/ reaches the transport or the HTTP client", () => {
    const reaching: string[] = [];
    for (const { file, text } of files) {
      if (file.startsWith("net/")) continue;
      for (const ref of readImports(file, text)) {
        if (/net\/(transport|http1\/|undici)/.test(ref.specifier) && !["s3/request.ts", "s3/client.ts"].includes(file)) reaching.push(`${file}:${ref.line} ${ref.specifier}`);
      }
    }
    assert.deepEqual(reaching, []);
    const request = files.find((f) => f.file === "s3/request.ts")!.text;
    assert.match(request, /this\.transport\.send\(/, "s3/request.ts hands requests to the transport");
    const senders = files.filter(({ file, text }) => file !== "s3/request.ts" && /\btransport\.send\(/.test(text)).map((f) => f.file);
    assert.deepEqual(senders, []);
  });

  it("imports the AWS SDK only through its public entry points for credentials, signing, config files and CRC64; no S3 client, no internals, no second transport", () => {
    const imports: string[] = [];
    for (const { file, text } of files) {
      for (const ref of readImports(file, text)) {
        const external = !ref.specifier.startsWith(".") && !ref.specifier.startsWith("node:");
        if (!external) continue;
        const sdk = ref.specifier.startsWith("@aws-sdk/") || ref.specifier.startsWith("@smithy/");
        if ((sdk && !SDK_ENTRY_POINTS.has(ref.specifier)) || ref.specifier === "undici") imports.push(`${file}:${ref.line} ${ref.specifier}`);
      }
      // Reaching into a client's resolved configuration or middleware stack is an internal, whatever the import.
      if (/middlewareStack|\.config as unknown/.test(text)) imports.push(`${file}: reaches into an SDK client's internals`);
    }
    assert.deepEqual(imports, []);
  });

  it("keeps no module-level mutable state on the request path (s3/, net/)", () => {
    const state = files.filter(({ file }) => file.startsWith("s3/") || file.startsWith("net/")).flatMap(({ file, text }) => moduleState(file, text));
    assert.deepEqual(state, []);
  });

  it("finds module-level state where there is some (the rule's own check)", () => {
    const sample = `let counter = 0;\nconst table = new Map();\nexport function f() { table.set(1, 2); }\nconst frozen = new Set([1]);\nconst cache = {};\nfunction g() { cache.x = 1; }\n`;
    assert.deepEqual(moduleState("net/x.ts", sample), ["net/x.ts:1 counter (a module-level let/var)", "net/x.ts:2 table (mutated in place)", "net/x.ts:5 cache (mutated in place)"]);
  });
});
