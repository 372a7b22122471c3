import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The layers of issue #23 as far as the CLI and the planner go: cli/ talks
// to the engine and the planner only; plan/ is pure and imports no layer
// that does I/O. Read from the TypeScript sources, so type-only imports count too.

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../src");

function sourceFiles(folder: string): string[] {
  return readdirSync(join(SRC, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(SRC, folder, name));
}

/** The src-relative modules a file imports or re-exports, e.g. "s3/client.ts". */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/g)) {
    found.push(relative(SRC, resolve(dirname(file), match[1])).replace(/\.js$/, ".ts"));
  }
  return found;
}

function layerOf(module: string): string {
  return module.split("/")[0];
}

/** Every import cycle among `files`, each as the path that closes it. */
function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [relative(SRC, f), importsOf(f)]));
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (node: string, path: string[]): void => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "open") {
      found.push([...path.slice(path.indexOf(node)), node]);
      return;
    }
    state.set(node, "open");
    for (const next of graph.get(node) ?? []) if (graph.has(next)) visit(next, [...path, node]);
    state.set(node, "done");
  };
  for (const node of graph.keys()) visit(node, []);
  return found;
}

describe("layers: cli/ and plan/ (issue #23)", () => {
  it("cli/ imports no module of s3/ or net/ (the engine hands down what the commands need)", () => {
    const offending = sourceFiles("cli").flatMap((file) => importsOf(file).filter((m) => ["s3", "net"].includes(layerOf(m))).map((m) => `${relative(SRC, file)} → ${m}`));
    assert.deepEqual(offending, []);
  });

  it("plan/ imports nothing from cli/, engine/, s3/ or net/: it decides, it does no I/O", () => {
    const offending = sourceFiles("plan").flatMap((file) => importsOf(file).filter((m) => layerOf(m) !== "plan").map((m) => `${relative(SRC, file)} → ${m}`));
    assert.deepEqual(offending, []);
  });

  it("no import cycle within cli/ or within plan/", () => {
    assert.deepEqual(cycles([...sourceFiles("cli"), ...sourceFiles("plan")]), []);
  });
});
