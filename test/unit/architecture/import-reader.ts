import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/**
 * Reads which module imports which in a tree of TypeScript sources, for the
 * architecture tests (import-graph.test.ts). The sources are parsed with the
 * TypeScript compiler already in devDependencies, not scanned with regular
 * expressions: an `import("x")` inside a comment or a string, or a quote
 * inside a regex literal, cannot fool a parser.
 *
 * Type-only imports are read and marked (`typeOnly`), and the architecture
 * rules count them: a type from s3/ in cli/ ties cli/ to s3/ just as a value
 * does (cli/ must change when that type does), and tsc erases it, so the
 * compiled output would hide the dependency the rules are about.
 */

/** How a module names another one. */
export type ImportKind =
  | "import" // import … from "x", import "x"
  | "export" // export … from "x"
  | "dynamic" // import("x") as an expression
  | "type-query"; // typeof import("x"), import("x").T in a type position

export interface ImportRef {
  specifier: string;
  kind: ImportKind;
  /** Erased by tsc: `import type`, `export type`, every named binding marked `type`, or an import in a type position. */
  typeOnly: boolean;
  /** 1-based line of the import, for messages. */
  line: number;
}

/** An import between two files of the tree, by paths relative to its root ("cli/main.ts"). */
export interface ImportEdge extends ImportRef {
  from: string;
  to: string;
}

export interface ImportGraph {
  /** Every .ts file of the tree, relative to its root, with '/' separators. */
  files: string[];
  /** Imports of one file of the tree by another, in file order. */
  edges: ImportEdge[];
  /** Relative imports that name no file of the tree (a typo, a .json import): reported, not guessed. */
  unresolved: ImportEdge[];
}

/** Every import of one source file, in order of appearance. */
export function readImports(fileName: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const refs: ImportRef[] = [];
  const add = (node: ts.Node, literal: ts.Expression | undefined, kind: ImportKind, typeOnly: boolean): void => {
    if (!literal || !ts.isStringLiteralLike(literal)) return; // import(variable): nothing to read statically
    refs.push({ specifier: literal.text, kind, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node, node.moduleSpecifier, "import", importIsTypeOnly(node.importClause));
    } else if (ts.isExportDeclaration(node)) {
      add(node, node.moduleSpecifier, "export", exportIsTypeOnly(node));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, "import", node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], "dynamic", false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal, "type-query", true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return refs;
}

/** tsc drops an import whose every binding is a type: `import type {A}`, `import {type A, type B}`. */
function importIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false; // import "x": run for its side effects
  if (clause.isTypeOnly) return true;
  if (clause.name) return false; // a default import is a value
  const bindings = clause.namedBindings;
  if (!bindings || ts.isNamespaceImport(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function exportIsTypeOnly(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/** The .ts files under `root`, relative to it with '/' separators, sorted. */
export function listSources(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(relative(root, path).split(sep).join("/"));
    }
  };
  walk(root);
  return out;
}

/**
 * The import graph of the tree under `root`. Only relative specifiers
 * ("./x.js", "../s3/y.js") are followed: packages and node: modules are
 * outside the tree. A specifier names the compiled file, so "./x.js" is the
 * source "./x.ts" (NodeNext resolution, as tsconfig.json has it).
 */
export function readImportGraph(root: string): ImportGraph {
  const files = listSources(root);
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  const unresolved: ImportEdge[] = [];
  for (const from of files) {
    for (const ref of readImports(from, readFileSync(join(root, from), "utf8"))) {
      if (!ref.specifier.startsWith("./") && !ref.specifier.startsWith("../")) continue;
      const target = relative(root, resolve(root, dirname(from), ref.specifier)).split(sep).join("/");
      const to = target.replace(/\.js$/, ".ts");
      (known.has(to) ? edges : unresolved).push({ ...ref, from, to });
    }
  }
  return { files, edges, unresolved };
}

/**
 * One cycle for every group of files that import each other (strongly
 * connected components of two or more files, or a file importing itself),
 * each as a path that starts and ends at the same file: ["a.ts", "b.ts", "a.ts"].
 */
export function findCycles(files: readonly string[], edges: readonly Pick<ImportEdge, "from" | "to">[]): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) {
    const targets = next.get(e.from) ?? [];
    if (!targets.includes(e.to)) targets.push(e.to);
    next.set(e.from, targets);
  }
  const cycles: string[][] = [];
  for (const component of stronglyConnected(next)) {
    const start = component[0];
    const inside = new Set(component);
    if (component.length === 1 && !(next.get(start) ?? []).includes(start)) continue;
    cycles.push(shortestCycle(start, inside, next));
  }
  return cycles;
}

/** Tarjan's algorithm, iteratively (no recursion limit on a deep tree); components sorted by their first file. */
function stronglyConnected(next: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  for (const root of [...next.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; i: number }[] = [{ node: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = next.get(frame.node) ?? [];
      if (frame.i < targets.length) {
        const to = targets[frame.i++];
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node) ?? 0, index.get(to) ?? 0));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(frame.node) ?? 0));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop();
          if (member === undefined) break;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component.sort());
      }
    }
  }
  return components.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** A shortest path from `start` back to itself inside one component (breadth first). */
function shortestCycle(start: string, inside: Set<string>, next: Map<string, string[]>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const to of next.get(node) ?? []) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const path: string[] = [];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at)) path.unshift(at);
        return [start, ...path, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}
