import assert from "node:assert/strict";
import { fixtureTree, type FixtureTree } from "./fixture-tree.js";
import { findCycles, readImportGraph, readImports } from "./import-reader.js";

/** The reader behind import-graph.test.ts, on small sources written for the purpose. */
describe("architecture: the import reader", () => {
  it("reads static, re-exported and dynamic imports, with their lines", () => {
    const text = [
      `import { a } from "./a.js";`,
      `import * as b from "../b.js";`,
      `import "./side-effect.js";`,
      `export { c } from "./c.js";`,
      `export * from "./d.js";`,
      `const e = await import("./e.js");`,
      `import {`,
      `  f,`,
      `  g,`,
      `} from "./fg.js";`,
    ].join("\n");
    assert.deepEqual(
      readImports("x.ts", text).map((r) => [r.specifier, r.kind, r.typeOnly, r.line]),
      [
        ["./a.js", "import", false, 1],
        ["../b.js", "import", false, 2],
        ["./side-effect.js", "import", false, 3],
        ["./c.js", "export", false, 4],
        ["./d.js", "export", false, 5],
        ["./e.js", "dynamic", false, 6],
        ["./fg.js", "import", false, 7],
      ],
    );
  });

  it("marks the imports tsc erases as type-only, and only those", () => {
    const text = [
      `import type { A } from "./type-clause.js";`,
      `import { type B, type C } from "./all-inline-types.js";`,
      `import { type D, e } from "./one-value.js";`,
      `import F, { type G } from "./default-value.js";`,
      `export type { H } from "./export-type.js";`,
      `export { type I } from "./export-inline-type.js";`,
      `let m: Promise<typeof import("./type-query.js")>;`,
      `type J = import("./import-type.js").J;`,
    ].join("\n");
    assert.deepEqual(
      readImports("x.ts", text).map((r) => [r.specifier, r.kind, r.typeOnly]),
      [
        ["./type-clause.js", "import", true],
        ["./all-inline-types.js", "import", true],
        ["./one-value.js", "import", false],
        ["./default-value.js", "import", false],
        ["./export-type.js", "export", true],
        ["./export-inline-type.js", "export", true],
        ["./type-query.js", "type-query", true],
        ["./import-type.js", "type-query", true],
      ],
    );
  });

  it("is not fooled by imports in comments, strings, templates or regex literals", () => {
    const text = [
      `// import { x } from "./in-line-comment.js";`,
      `/* import("./in-block-comment.js") */`,
      `const s = 'import "./in-string.js"';`,
      `const t = \`import("./in-template.js") \${1}\`;`,
      `const r = /[!'"()*]/g; import { real } from "./after-regex.js";`,
      `const n = import(name);`,
    ].join("\n");
    assert.deepEqual(
      readImports("x.ts", text).map((r) => r.specifier),
      ["./after-regex.js"],
    );
  });

  it("finds a cycle and prints it as a path back to its start", () => {
    const files = ["a.ts", "b.ts", "c.ts", "d.ts", "self.ts"];
    const edges = [
      { from: "a.ts", to: "b.ts" },
      { from: "b.ts", to: "c.ts" },
      { from: "c.ts", to: "a.ts" },
      { from: "c.ts", to: "d.ts" },
      { from: "self.ts", to: "self.ts" },
    ];
    assert.deepEqual(findCycles(files, edges), [
      ["a.ts", "b.ts", "c.ts", "a.ts"],
      ["self.ts", "self.ts"],
    ]);
  });

  it("finds no cycle in a graph that only shares dependencies (a diamond)", () => {
    const edges = [
      { from: "top.ts", to: "left.ts" },
      { from: "top.ts", to: "right.ts" },
      { from: "left.ts", to: "bottom.ts" },
      { from: "right.ts", to: "bottom.ts" },
    ];
    assert.deepEqual(findCycles(["bottom.ts", "left.ts", "right.ts", "top.ts"], edges), []);
  });

  describe("on a tree of files", () => {
    let tree: FixtureTree;
    let root: string;

    before(async () => {
      tree = await fixtureTree("s3x-import-reader-", {
        "cli/main.ts": `import { run } from "../engine/run.js";\nimport type { Pool } from "../net/pool.js";\nimport yargs from "yargs";\nimport { x } from "./missing.js";\n`,
        "engine/run.ts": `import { helper } from "./helper.js";\nexport const run = 1;\n`,
        "engine/helper.ts": `import type { Run } from "./run.js";\nexport const helper = 2;\n`,
        "net/pool.ts": `export interface Pool { size: number }\n`,
        "net/types.d.ts": `export {};\n`,
      });
      root = tree.root;
    });

    after(() => tree.remove());

    it("resolves relative .js specifiers to the .ts sources, and leaves packages out", async () => {
      const graph = readImportGraph(root);
      assert.deepEqual(graph.files, ["cli/main.ts", "engine/helper.ts", "engine/run.ts", "net/pool.ts"]);
      assert.deepEqual(
        graph.edges.map((e) => `${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`),
        ["cli/main.ts -> engine/run.ts", "cli/main.ts -> net/pool.ts (type)", "engine/helper.ts -> engine/run.ts (type)", "engine/run.ts -> engine/helper.ts"],
      );
      assert.deepEqual(
        graph.unresolved.map((e) => `${e.from}:${e.line} ${e.specifier}`),
        ["cli/main.ts:4 ./missing.js"],
      );
    });

    it("counts a cycle closed by a type-only import", () => {
      const graph = readImportGraph(root);
      assert.deepEqual(findCycles(graph.files, graph.edges), [["engine/helper.ts", "engine/run.ts", "engine/helper.ts"]]);
    });
  });
});
