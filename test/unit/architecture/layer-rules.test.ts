import assert from "node:assert/strict";
import { fixtureTree, type FixtureTree } from "./fixture-tree.js";
import { readImportGraph } from "./import-reader.js";
import { againstLayerOrder, cliReachingDown, describeEdge, layerOf, lineCount, longFiles } from "./layer-rules.js";

/** The rules behind import-graph.test.ts, on a small tree written for the purpose. */
describe("architecture: the layer rules", () => {
  let tree: FixtureTree;
  let root: string;

  before(async () => {
    tree = await fixtureTree("s3x-layer-rules-", {
      "cli/main.ts": `import { run } from "../engine/run.js";\nimport { keys } from "../plan/keys.js";\nimport type { Pool } from "../net/pool.js";\nimport { sign } from "../s3/sign.js";\n`,
      "plan/keys.ts": `export const keys = 1;\n`,
      "plan/leaky.ts": `import type { Sign } from "../s3/sign.js";\n`,
      "engine/run.ts": `import { keys } from "../plan/keys.js";\nimport { sign } from "../s3/sign.js";\nimport { pool } from "../net/pool.js";\n`,
      "s3/sign.ts": `import { pool } from "../net/pool.js";\nimport { run } from "../engine/run.js";\n`,
      "net/pool.ts": `export const pool = 1;\n${"//\n".repeat(399)}`,
      "net/long.ts": `${"//\n".repeat(401)}`,
    });
    root = tree.root;
  });

  after(() => tree.remove());

  it("names the layer of a file by its top-level directory", () => {
    assert.equal(layerOf("net/pool.ts"), "net");
    assert.equal(layerOf("engine/sinks/file-sink.ts"), "engine");
    assert.equal(layerOf("tools/x.ts"), undefined);
    assert.equal(layerOf("cli.ts"), undefined);
  });

  it("reports cli/'s imports of s3/ and net/, type-only ones included", () => {
    const graph = readImportGraph(root);
    assert.deepEqual(cliReachingDown(graph.edges).map(describeEdge), ["src/cli/main.ts:3 imports net/pool.ts (type only)", "src/cli/main.ts:4 imports s3/sign.ts"]);
  });

  it("reports imports of a layer above, and any import of another layer by plan/", () => {
    const graph = readImportGraph(root);
    assert.deepEqual(againstLayerOrder(graph.edges).map(describeEdge), ["src/plan/leaky.ts:1 imports s3/sign.ts (type only)", "src/s3/sign.ts:2 imports engine/run.ts"]);
  });

  it("counts lines as wc -l does and reports files over 400", () => {
    assert.equal(lineCount(""), 0);
    assert.equal(lineCount("a\n"), 1);
    assert.equal(lineCount("a\nb"), 2);
    const graph = readImportGraph(root);
    assert.deepEqual(longFiles(root, graph.files), ["src/net/long.ts: 401 lines"]);
  });
});
