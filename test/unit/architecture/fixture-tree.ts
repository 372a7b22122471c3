import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A scratch tree of source files for the architecture tests; `remove` deletes it. */
export interface FixtureTree {
  root: string;
  remove(): Promise<void>;
}

/** Writes `files` (path relative to the tree → text) under a new temporary directory. */
export async function fixtureTree(prefix: string, files: Record<string, string>): Promise<FixtureTree> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}
