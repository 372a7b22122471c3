import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findCycles, readImportGraph } from "./import-reader.js";
import { againstLayerOrder, cliReachingDown, describeEdge, layerOf, longFiles, MAX_LINES } from "./layer-rules.js";

/**
 * The architecture of docs/architecture.md, checked on the sources: src/,
 * read as TypeScript (the compiled test runs from dist/test/unit/architecture/).
 * Type-only imports count (import-reader.ts says why).
 */
const here = dirname(fileURLToPath(import.meta.url));
const SRC = join(here, "..", "..", "..", "..", "src");

describe("architecture: the import graph of src/", function () {
  // Parsing ~130 files takes a few seconds on two loaded cores.
  this.timeout(60_000);
  let graph: ReturnType<typeof readImportGraph>;

  before(() => {
    assert.ok(existsSync(join(SRC, "cli", "main.ts")), `no sources at ${SRC}`);
    graph = readImportGraph(SRC);
  });

  it("reads every relative import as a file of src/", () => {
    assert.ok(graph.files.length > 50, `only ${graph.files.length} files read under ${SRC}`);
    assert.deepEqual(graph.unresolved.map(describeEdge), []);
  });

  it("puts every file of src/ in a layer (cli, plan, engine, s3, net)", () => {
    const outside = graph.files.filter((f) => layerOf(f) === undefined);
    assert.deepEqual(outside, [], "a new top-level directory needs its place in MAY_IMPORT (layer-rules.ts)");
  });

  it("has no import cycle", () => {
    const cycles = findCycles(graph.files, graph.edges).map((c) => c.join(" → "));
    assert.deepEqual(cycles, [], `import cycles in src/:\n  ${cycles.join("\n  ")}\n`);
  });

  it("keeps cli/ away from s3/ and net/ (it reaches them through engine/)", () => {
    const leaks = cliReachingDown(graph.edges).map(describeEdge);
    assert.deepEqual(leaks, [], `cli/ imports s3/ or net/:\n  ${leaks.join("\n  ")}\n`);
  });

  it("never imports a layer above its own (cli → plan → engine → s3 → net; plan/ imports no other layer)", () => {
    const upward = againstLayerOrder(graph.edges).map(describeEdge);
    assert.deepEqual(upward, [], `imports against the layer order:\n  ${upward.join("\n  ")}\n`);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = longFiles(SRC, graph.files);
    assert.deepEqual(long, [], `files over ${MAX_LINES} lines:\n  ${long.join("\n  ")}\n`);
  });
});
