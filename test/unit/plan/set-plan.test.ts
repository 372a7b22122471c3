import assert from "node:assert/strict";
import { join, resolve, sep } from "node:path";
import { compileFilters, type Filter } from "../../../src/plan/filters.js";
import { placeInDirectory, placeUnderPrefix, type LocalTarget, type PrefixTarget } from "../../../src/plan/placement.js";
import { planSet, type DestinationEntry, type Placement, type SetAction, type SetDestination, type SetEntry, type SetRules, type SetSource, type SourceItem } from "../../../src/plan/set-plan.js";
import type { EntryState } from "../../../src/plan/sync.js";

// In-memory ends: the planner does no I/O of its own, so what it decides is
// tested over plain arrays and maps standing in for a walked directory, a
// listed prefix and a local tree.

const T = Date.UTC(2026, 10, 22, 5, 0, 0);

interface Held {
  path: string;
  size: number;
  mtimeMs?: number;
}

/** A source of files ("local") or objects ("s3"), optionally with problems met on the way and a listing that stops short. */
class MemorySource implements SetSource<string> {
  whole = false;
  reads = 0;
  constructor(
    readonly side: "local" | "s3",
    private readonly items_: (Held | { problem: string } | { skipped: string })[],
    private readonly readToEnd = true,
    readonly name = side === "s3" ? "s3://src/p/" : "./src",
  ) {}

  async *items(): AsyncGenerator<SourceItem<string>> {
    this.reads++;
    for (const item of this.items_) {
      if ("problem" in item) yield { problem: { shown: join(this.name, item.problem), message: `cannot read: EACCES`, relativePath: item.problem } };
      else if ("skipped" in item) yield { problem: { shown: join(this.name, item.skipped), message: "File does not exist.", relativePath: item.skipped, skipped: true } };
      else yield { entry: { relativePath: item.path, size: item.size, mtimeMs: item.mtimeMs ?? T, ref: item.path } };
    }
    if (this.readToEnd) this.whole = true;
  }

  shown(entry: SetEntry<string>): string {
    return this.side === "s3" ? `s3://src/p/${entry.relativePath}` : join(this.name, entry.relativePath);
  }

  described(entry: SetEntry<string>): string {
    return `key "p/${entry.ref}"`;
  }
}

/** A local directory held in a map, placed by the same key-to-path rules as the real one. */
class MemoryTree implements SetDestination<LocalTarget> {
  readonly side = "local";
  readonly root = resolve("/tmp/s3x-memory-tree");
  constructor(private readonly files: Held[] = []) {}

  place(relativePath: string, size: number): Placement<LocalTarget> {
    return placeInDirectory(this.root, "dest", relativePath, size);
  }

  async existing(placement: Placement<LocalTarget> & { ok: true }): Promise<EntryState | undefined> {
    const file = this.files.find((f) => join(this.root, f.path) === placement.target.path);
    return file && { size: file.size, mtimeMs: file.mtimeMs ?? T };
  }

  async *entries(): AsyncGenerator<DestinationEntry<LocalTarget>> {
    for (const f of this.files) yield { relativePath: f.path, target: { path: join(this.root, f.path) }, shown: join("dest", f.path) };
  }
}

/** An S3 prefix held in a map, read whole by prepare() as the real one lists. */
class MemoryPrefix implements SetDestination<PrefixTarget> {
  readonly side = "s3";
  prepared = false;
  constructor(private readonly objects: Held[] = []) {}

  place(relativePath: string): Placement<PrefixTarget> {
    return placeUnderPrefix("dst", "q/", relativePath);
  }

  async prepare(): Promise<void> {
    this.prepared = true;
  }

  async existing(placement: Placement<PrefixTarget> & { ok: true }): Promise<EntryState | undefined> {
    assert.ok(this.prepared, "compared before the destination was listed");
    const held = this.objects.find((o) => o.path === placement.relativePath);
    return held && { size: held.size, mtimeMs: held.mtimeMs ?? T };
  }

  async *entries(): AsyncGenerator<DestinationEntry<PrefixTarget>> {
    assert.ok(this.prepared, "deleting from a destination never listed");
    for (const o of this.objects) yield { relativePath: o.path, target: { bucket: "dst", key: `q/${o.path}` }, shown: `s3://dst/q/${o.path}` };
  }
}

function rules(overrides: Partial<Omit<SetRules, "filters">> & { filters?: Filter[] } = {}): SetRules {
  return {
    compare: false,
    sync: { sizeOnly: false, exactTimestamps: false },
    delete: false,
    dryrun: false,
    ...overrides,
    filters: compileFilters(overrides.filters ?? []),
  };
}

async function plan<Target>(source: SetSource<string>, destination: SetDestination<Target>, setRules: SetRules): Promise<SetAction<string, Target>[]> {
  const actions: SetAction<string, Target>[] = [];
  for await (const action of planSet(source, destination, setRules)) actions.push(action);
  return actions;
}

/** Each action as one short line: what the tests compare. */
function summary<Target>(actions: SetAction<string, Target>[]): string[] {
  return actions.map((a) => {
    switch (a.kind) {
      case "transfer":
        return `${a.dryrun ? "(dryrun) " : ""}transfer ${a.source} -> ${a.destination}`;
      case "skip":
        return `skip ${a.source}`;
      case "refuse":
        return `refuse ${a.source}: ${a.error.message}`;
      case "warn":
        return `warn ${a.source}: ${a.warning}`;
      case "delete":
        return `${a.dryrun ? "(dryrun) " : ""}delete ${a.shown}`;
    }
  });
}

describe("plan/set-plan: one planner for every direction", () => {
  it("upload: every file to its key under the destination prefix, in the walk's order", async () => {
    const actions = await plan(new MemorySource("local", [{ path: "b.bin", size: 1 }, { path: "a/c.txt", size: 2 }]), new MemoryPrefix(), rules());
    assert.deepEqual(summary(actions), [`transfer ${join("./src", "b.bin")} -> s3://dst/q/b.bin`, `transfer ${join("./src", "a/c.txt")} -> s3://dst/q/a/c.txt`]);
    const first = actions[0] as Extract<SetAction<string, PrefixTarget>, { kind: "transfer" }>;
    assert.deepEqual(first.target, { bucket: "dst", key: "q/b.bin" });
  });

  it("download: every key to its path under the destination directory", async () => {
    const tree = new MemoryTree();
    const actions = await plan(new MemorySource("s3", [{ path: "x/y.bin", size: 3 }]), tree, rules());
    assert.deepEqual(summary(actions), [`transfer s3://src/p/x/y.bin -> ${join("dest", "x/y.bin")}`]);
    assert.deepEqual((actions[0] as Extract<SetAction<string, LocalTarget>, { kind: "transfer" }>).target, { path: join(tree.root, "x", "y.bin") });
  });

  it("S3→S3 copy: every key to the same relative key under the destination prefix", async () => {
    const actions = await plan(new MemorySource("s3", [{ path: "k1", size: 1 }, { path: "d/k2", size: 1 }]), new MemoryPrefix(), rules());
    assert.deepEqual(summary(actions), ["transfer s3://src/p/k1 -> s3://dst/q/k1", "transfer s3://src/p/d/k2 -> s3://dst/q/d/k2"]);
  });

  it("refuses a local-to-local set: that is not a transfer s3x makes", async () => {
    await assert.rejects(plan(new MemorySource("local", [{ path: "a", size: 1 }]), new MemoryTree(), rules()), /a set goes from a local directory to S3/);
  });

  describe("sync rules (README \"Differences from aws-cli\")", () => {
    const compare = rules({ compare: true });

    it("upload and copy: a same-size source that is newer goes, one as old or older is skipped; a size change always goes", async () => {
      const dest = new MemoryPrefix([{ path: "newer", size: 1 }, { path: "same", size: 1 }, { path: "older", size: 1 }, { path: "resized", size: 1 }]);
      const source = [
        { path: "newer", size: 1, mtimeMs: T + 5_000 },
        { path: "same", size: 1, mtimeMs: T },
        { path: "older", size: 1, mtimeMs: T - 5_000 },
        { path: "resized", size: 2, mtimeMs: T - 5_000 },
        { path: "missing", size: 1 },
      ];
      for (const side of ["local", "s3"] as const) {
        const kinds = (await plan(new MemorySource(side, source), dest, compare)).map((a) => a.kind);
        assert.deepEqual(kinds, ["transfer", "skip", "skip", "transfer", "transfer"], side);
      }
    });

    it("download: a same-size object whose time differs either way goes (an object rewritten in S3 is fetched), equal times are skipped", async () => {
      const tree = new MemoryTree([{ path: "newer", size: 1 }, { path: "same", size: 1 }, { path: "older", size: 1 }]);
      const source = new MemorySource("s3", [
        { path: "newer", size: 1, mtimeMs: T + 5_000 },
        { path: "same", size: 1, mtimeMs: T + 400 },
        { path: "older", size: 1, mtimeMs: T - 5_000 },
      ]);
      assert.deepEqual((await plan(source, tree, compare)).map((a) => a.kind), ["transfer", "skip", "transfer"]);
    });

    it("--size-only compares sizes alone, in every direction", async () => {
      const sizeOnly = rules({ compare: true, sync: { sizeOnly: true, exactTimestamps: false } });
      const source = [{ path: "a", size: 1, mtimeMs: T + 60_000 }, { path: "b", size: 2 }];
      assert.deepEqual((await plan(new MemorySource("s3", source), new MemoryTree([{ path: "a", size: 1 }, { path: "b", size: 1 }]), sizeOnly)).map((a) => a.kind), ["skip", "transfer"]);
      assert.deepEqual((await plan(new MemorySource("local", source), new MemoryPrefix([{ path: "a", size: 1 }, { path: "b", size: 1 }]), sizeOnly)).map((a) => a.kind), ["skip", "transfer"]);
    });

    it("without comparing (cp -r), everything goes and an S3 destination is never listed", async () => {
      const dest = new MemoryPrefix([{ path: "a", size: 1 }]);
      assert.deepEqual((await plan(new MemorySource("local", [{ path: "a", size: 1 }]), dest, rules())).map((a) => a.kind), ["transfer"]);
      assert.equal(dest.prepared, false);
    });

    it("while an S3 destination is listed the source is read whole; its problems come out first, then the entries in order", async () => {
      const source = new MemorySource("local", [{ path: "a", size: 1 }, { problem: "locked" }, { path: "b", size: 1 }]);
      const actions = await plan(source, new MemoryPrefix(), compare);
      assert.deepEqual(summary(actions).map((line) => line.split(" ")[0]), ["refuse", "transfer", "transfer"]);
      assert.match(summary(actions)[0], /locked: cannot read: EACCES$/);
    });

    it("streaming (no listing to wait for): a problem comes out where the walk met it", async () => {
      const source = new MemorySource("local", [{ path: "a", size: 1 }, { problem: "locked" }, { path: "b", size: 1 }, { problem: "loop" }]);
      assert.deepEqual(summary(await plan(source, new MemoryPrefix(), rules())).map((line) => line.split(" ")[0]), ["transfer", "refuse", "transfer", "refuse"]);
    });
  });

  describe("filters (aws-cli --include/--exclude, matched against the relative path)", () => {
    it("an excluded entry yields nothing; the last matching filter decides", async () => {
      const source = new MemorySource("local", [{ path: "a.json", size: 1 }, { path: "b.tmp", size: 1 }, { path: "keep.tmp", size: 1 }]);
      const filtered = rules({ filters: [{ kind: "exclude", pattern: "*.tmp" }, { kind: "include", pattern: "keep*" }] });
      assert.deepEqual(summary(await plan(source, new MemoryPrefix(), filtered)), [`transfer ${join("./src", "a.json")} -> s3://dst/q/a.json`, `transfer ${join("./src", "keep.tmp")} -> s3://dst/q/keep.tmp`]);
    });

    it("--delete never removes what the filters exclude", async () => {
      const dest = new MemoryPrefix([{ path: "gone.json", size: 1 }, { path: "gone.tmp", size: 1 }]);
      const actions = await plan(new MemorySource("local", []), dest, rules({ compare: true, delete: true, filters: [{ kind: "exclude", pattern: "*.tmp" }] }));
      assert.deepEqual(summary(actions), ["delete s3://dst/q/gone.json"]);
    });
  });

  describe("--delete", () => {
    it("deletes what the destination holds and the source lacks, after every transfer", async () => {
      const tree = new MemoryTree([{ path: "kept", size: 1 }, { path: "stale", size: 1 }, { path: "sub/stale", size: 1 }]);
      const actions = await plan(new MemorySource("s3", [{ path: "kept", size: 1 }, { path: "new", size: 1 }]), tree, rules({ compare: true, delete: true }));
      assert.deepEqual(summary(actions), ["skip s3://src/p/kept", `transfer s3://src/p/new -> ${join("dest", "new")}`, `delete ${join("dest", "stale")}`, `delete ${join("dest", "sub/stale")}`]);
    });

    it("leaves what lies under a part of the source it could not read (an unreadable directory's files are not known to be gone)", async () => {
      const dest = new MemoryPrefix([{ path: "kept", size: 1 }, { path: "locked/a", size: 1 }, { path: "locked/deep/b", size: 1 }, { path: "locked", size: 1 }, { path: "lockedness", size: 1 }]);
      const source = new MemorySource("local", [{ path: "kept", size: 1 }, { problem: "locked" }]);
      const actions = await plan(source, dest, rules({ compare: true, delete: true }));
      assert.deepEqual(summary(actions).filter((line) => line.startsWith("delete")), ["delete s3://dst/q/lockedness"]);
    });

    it("a file skipped with a warning counts as absent (deleted, as aws-cli does), and the filters silence its warning", async () => {
      const dest = new MemoryPrefix([{ path: "broken", size: 1 }, { path: "pipe.sock", size: 1 }]);
      const source = new MemorySource("local", [{ skipped: "broken" }, { skipped: "pipe.sock" }]);
      const actions = await plan(source, dest, rules({ compare: true, delete: true, filters: [{ kind: "exclude", pattern: "*.sock" }] }));
      assert.deepEqual(summary(actions), [`warn ${join("./src", "broken")}: File does not exist.`, "delete s3://dst/q/broken"]);
    });

    it("deletes nothing when the source's root itself could not be read", async () => {
      const dest = new MemoryPrefix([{ path: "a", size: 1 }]);
      await assert.rejects(plan(new MemorySource("local", [{ problem: "." }]), dest, rules({ compare: true, delete: true })), /could not be read whole; nothing was deleted/);
    });

    it("counts a key as present under the path it lands on (a//b and a/./b are a/b)", async () => {
      const tree = new MemoryTree([{ path: "a/b", size: 1 }]);
      const actions = await plan(new MemorySource("s3", [{ path: "a//b", size: 1 }]), tree, rules({ compare: true, delete: true }));
      assert.deepEqual(actions.map((a) => a.kind), ["skip"]);
    });

    it("acts only on a source read to its end: a listing that stopped short deletes nothing", async () => {
      const dest = new MemoryPrefix([{ path: "a", size: 1 }, { path: "b", size: 1 }]);
      const shortListing = new MemorySource("s3", [{ path: "a", size: 1 }], false);
      const seen: string[] = [];
      await assert.rejects(
        (async () => {
          for await (const action of planSet(shortListing, dest, rules({ compare: true, delete: true }))) seen.push(action.kind);
        })(),
        /sync --delete: the listing of s3:\/\/src\/p\/ was not read to its end; nothing was deleted/,
      );
      assert.deepEqual(seen, ["skip"]);
    });

    it("in a dry run, says what it would delete", async () => {
      const actions = await plan(new MemorySource("s3", []), new MemoryPrefix([{ path: "old", size: 1 }]), rules({ compare: true, delete: true, dryrun: true }));
      assert.deepEqual(summary(actions), ["(dryrun) delete s3://dst/q/old"]);
    });
  });

  it("dry run: transfers are marked, skips stay skips", async () => {
    const actions = await plan(new MemorySource("local", [{ path: "a", size: 1 }, { path: "b", size: 1 }]), new MemoryPrefix([{ path: "b", size: 1 }]), rules({ compare: true, dryrun: true }));
    assert.deepEqual(summary(actions), [`(dryrun) transfer ${join("./src", "a")} -> s3://dst/q/a`, `skip ${join("./src", "b")}`]);
  });

  describe("key-to-path safety: nothing is written outside the destination directory", () => {
    it("refuses keys that climb out, absolute keys and NUL bytes, whatever the filters say", async () => {
      const keys = ["../escape", "a/../../escape", "/etc/passwd", "nul\0byte", "ok"];
      const actions = await plan(new MemorySource("s3", keys.map((path) => ({ path, size: 1 }))), new MemoryTree(), rules({ filters: [{ kind: "exclude", pattern: "*" }, { kind: "include", pattern: "ok" }] }));
      assert.deepEqual(
        summary(actions),
        [
          's3://src/p/../escape: refused key "p/../escape": the key would land outside the destination directory',
          's3://src/p/a/../../escape: refused key "p/a/../../escape": the key would land outside the destination directory',
          's3://src/p//etc/passwd: refused key "p//etc/passwd": the key is an absolute path',
          's3://src/p/nul\0byte: refused key "p/nul\0byte": the key contains a NUL byte',
        ].map((line) => `refuse ${line}`).concat(`transfer s3://src/p/ok -> ${join("dest", "ok")}`),
      );
    });

    it("refuses a key ending in \"/\" that holds bytes (no file can have its name), unless the filters exclude it", async () => {
      const source = new MemorySource("s3", [{ path: "dir/", size: 5 }]);
      assert.deepEqual(summary(await plan(source, new MemoryTree(), rules())), ['refuse s3://src/p/dir/: refused key "p/dir/": it ends in "/", as a folder does, but holds 5 bytes']);
      assert.deepEqual(await plan(source, new MemoryTree(), rules({ filters: [{ kind: "exclude", pattern: "dir/" }] })), []);
    });

    it("every target it accepts, of many awkward keys, lies inside the destination directory", async () => {
      const parts = ["a", "..", ".", "", "b..", "..c", "~", " ", "é", "x%2F.."];
      const keys: string[] = [];
      for (const p of parts) for (const q of parts) for (const r of parts) keys.push(`${p}/${q}/${r}`);
      const tree = new MemoryTree();
      const actions = await plan(new MemorySource("s3", keys.map((path) => ({ path, size: 1 }))), tree, rules());
      let accepted = 0;
      for (const action of actions) {
        if (action.kind !== "transfer") continue;
        accepted++;
        assert.ok(action.target.path.startsWith(tree.root + sep), `${JSON.stringify(action.entry.relativePath)} landed on ${action.target.path}`);
      }
      assert.ok(accepted > 100 && accepted < keys.length, `${accepted} of ${keys.length} accepted`);
    });
  });
});
