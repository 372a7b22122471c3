import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A scratch tree of source files for the architecture tests: `write` adds one, `remove` deletes the tree. */
export interface FixtureTree {
  root: string;
  write(path: string, text: string): Promise<void>;
  remove(): Promise<void>;
}

export async function fixtureTree(prefix: string): Promise<FixtureTree> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  return {
    root,
    async write(path, text) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
