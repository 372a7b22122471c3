import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * s3x's version, from its own package.json: the first one named "s3x" above
 * this module (dist/src/cli/ compiled, or the bundle in dist/). Given to yargs
 * explicitly because yargs' own guess looks near the entry script and the
 * working directory, and printed "unknown" when s3x ran from anywhere else.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "s3x" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // no package.json here: look one folder up
    }
    dir = dirname(dir);
  }
  return "unknown";
}
