import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ImportEdge } from "./import-reader.js";

/** The layers of src/, one top-level directory each (docs/architecture.md). */
export type Layer = "cli" | "plan" | "engine" | "s3" | "net";

/**
 * What each layer may import besides itself. The chain is
 * cli → plan → engine → s3 → net, and no layer imports one above it. plan/
 * is pure (no I/O): it imports no other layer, and both cli/ and engine/
 * use it (engine/ executes the plans and part/range layouts plan/ computes).
 * cli/ reaches s3/ and net/ only through engine/.
 */
export const MAY_IMPORT: Readonly<Record<Layer, readonly Layer[]>> = {
  cli: ["plan", "engine"],
  plan: [],
  engine: ["plan", "s3", "net"],
  s3: ["net"],
  net: [],
};

/** Lines a source file may have: past this it usually does two jobs. */
export const MAX_LINES = 400;

/** The layer of a path relative to src/ ("net/pools.ts" → "net"); undefined for a file outside every layer. */
export function layerOf(file: string): Layer | undefined {
  const top = file.split("/")[0];
  return Object.hasOwn(MAY_IMPORT, top) && file.includes("/") ? (top as Layer) : undefined;
}

export const describeEdge = (e: ImportEdge): string => `src/${e.from}:${e.line} imports ${e.to}${e.typeOnly ? " (type only)" : ""}`;

/** Imports of s3/ or net/ by cli/. */
export function cliReachingDown(edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.filter((e) => layerOf(e.from) === "cli" && (layerOf(e.to) === "s3" || layerOf(e.to) === "net"));
}

/** Imports MAY_IMPORT does not allow, except cli/'s of s3/ and net/ (cliReachingDown reports those). */
export function againstLayerOrder(edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.filter((e) => {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    if (!from || !to || from === to) return false;
    if (from === "cli" && (to === "s3" || to === "net")) return false;
    return !MAY_IMPORT[from].includes(to);
  });
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** Files of `root` over MAX_LINES lines, as "src/x.ts: N lines". */
export function longFiles(root: string, files: readonly string[]): string[] {
  return files
    .map((f) => ({ file: f, lines: lineCount(readFileSync(join(root, f), "utf8")) }))
    .filter((f) => f.lines > MAX_LINES)
    .map((f) => `src/${f.file}: ${f.lines} lines`);
}
