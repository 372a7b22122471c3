import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { writePolicies } from "../../../src/engine/sinks/blocking-writes.js";
import { FileSink } from "../../../src/engine/sinks/file-sink.js";
import { MAX_WRITE_CALL } from "../../../src/engine/sinks/write-calls.js";
import { nodeFileSystem, type SinkFileSystem } from "../../../src/engine/sinks/range-journal.js";

/** One recorded call: when it began (">") or ended ("<"), what, on which file, and for journal writes the text. */
interface Call {
  edge: ">" | "<";
  op: string;
  file: string;
  text?: string;
  /** For a write of a buffer: the byte count asked for. */
  length?: number;
}

/**
 * A file system that does the real calls and records each one's beginning
 * and end, so a test can check that one call ended before another began
 * (the order a power loss cares about), with no timing involved.
 */
class RecordingFileSystem implements SinkFileSystem {
  readonly calls: Call[] = [];
  private waiters: { op: string; file: string; resolve: () => void }[] = [];

  constructor(private readonly name: (path: string) => string) {}

  private async record<T>(op: string, file: string, run: () => Promise<T>, text?: string, length?: number): Promise<T> {
    this.calls.push({ edge: ">", op, file, text, length });
    const result = await run();
    this.calls.push({ edge: "<", op, file, text });
    for (const w of this.waiters.filter((w) => w.op === op && w.file === file)) w.resolve();
    this.waiters = this.waiters.filter((w) => !(w.op === op && w.file === file));
    return result;
  }

  /** Resolves when the next `op` on `file` ends. */
  next(op: string, file: string): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ op, file, resolve }));
  }

  /** Which file each open descriptor is, for blocking writes (which name a descriptor, not a handle). */
  private readonly files = new Map<number, string>();

  writeSync(fd: number, data: Uint8Array, offset: number, length: number, position: number): number {
    const file = this.files.get(fd) ?? `fd ${fd}`;
    this.calls.push({ edge: ">", op: "write", file, length });
    const written = nodeFileSystem.writeSync(fd, data, offset, length, position);
    this.calls.push({ edge: "<", op: "write", file });
    return written;
  }

  async open(path: string, flags: string, mode?: number): Promise<FileHandle> {
    const file = this.name(path);
    const handle = await this.record("open", file, () => nodeFileSystem.open(path, flags, mode));
    this.files.set(handle.fd, file);
    const recorded = new Set(["write", "datasync", "sync", "truncate", "utimes", "close"]);
    return new Proxy(handle, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        const method = value as (...args: unknown[]) => Promise<unknown>;
        if (typeof prop !== "string" || !recorded.has(prop)) return method.bind(target);
        const text = (args: unknown[]) => (typeof args[0] === "string" ? args[0] : undefined);
        const length = (args: unknown[]) => (typeof args[2] === "number" ? args[2] : undefined);
        return (...args: unknown[]) => this.record(prop, file, () => method.apply(target, args), text(args), length(args));
      },
    });
  }

  async openFd(path: string, flags: string, mode?: number): Promise<number> {
    const file = this.name(path);
    const fd = await this.record("open", file, () => nodeFileSystem.openFd(path, flags, mode));
    this.files.set(fd, file);
    return fd;
  }

  rename(from: string, to: string): Promise<void> {
    return this.record("rename", this.name(from), () => nodeFileSystem.rename(from, to));
  }

  unlink(path: string): Promise<void> {
    return this.record("unlink", this.name(path), () => nodeFileSystem.unlink(path));
  }

  syncDirectory(path: string): Promise<void> {
    return this.record("syncDirectory", "dir", () => nodeFileSystem.syncDirectory(path));
  }

  /** Index of the first call matching, from `from` on (-1 when none). */
  find(edge: ">" | "<", op: string, file: string, from = 0, text?: RegExp): number {
    return this.calls.findIndex((c, i) => i >= from && c.edge === edge && c.op === op && c.file === file && (!text || text.test(c.text ?? "")));
  }

  count(op: string, file: string): number {
    return this.calls.filter((c) => c.edge === ">" && c.op === op && c.file === file).length;
  }
}

describe("engine/sinks/file-sink durability (order of writes, syncs and renames)", () => {
  let dir: string;
  let fs: RecordingFileSystem;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-durable-"));
    fs = new RecordingFileSystem((path) => (basename(path).endsWith(".journal") ? "journal" : basename(path).endsWith(".s3x-part") ? "temp" : basename(path)));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [how, writes] of [
    ["through the thread pool", () => ({})],
    ["with blocking write calls", () => writePolicies()],
  ] as const) {
    it(`a ranged download (${how}): data fdatasync'd before the journal lines that vouch for it, one sync per batch; the file fsynced before the rename, the directory after`, async () => {
      // Batches of 8 bytes; never by time (no timer fires in this test).
      const sink = new FileSink(join(dir, "out"), undefined, writes(), { fileSystem: fs, flush: { bytes: 8, ms: 3_600_000 } });
      await sink.claim();
      await sink.open(16, { etag: '"e"', size: 16 });
      const firstBatch = fs.next("datasync", "journal");
      await sink.write(1, 0, Buffer.from("aaaa"));
      await sink.write(2, 4, Buffer.from("bbbb"));
      await firstBatch;
      const secondBatch = fs.next("datasync", "journal");
      await sink.write(3, 8, Buffer.from("cccc"));
      await sink.write(4, 12, Buffer.from("dddd"));
      await secondBatch;
      await sink.commit({ lastModified: new Date("2022-02-02T02:02:02Z") });

      // Each batch: its ranges' writes ended → the data's fdatasync → the lines → the journal's fdatasync.
      let from = 0;
      for (const offsets of [[0, 4], [8, 12]]) {
        const lines = fs.find(">", "write", "journal", from, new RegExp(`"o":${offsets[0]},.*"o":${offsets[1]},`, "s"));
        assert.ok(lines > 0, `one journal write holds the lines of ranges ${offsets}: ${JSON.stringify(fs.calls)}`);
        const syncBegan = fs.calls.slice(0, lines).map((c, i) => (c.edge === ">" && c.op === "datasync" && c.file === "temp" ? i : -1)).filter((i) => i >= 0).pop()!;
        assert.ok(syncBegan >= 0, "a data sync before the lines");
        assert.ok(fs.find("<", "datasync", "temp", syncBegan) < lines, "the data sync ended before the lines were written");
        const dataWrites = fs.calls.map((c, i) => (c.edge === "<" && c.op === "write" && c.file === "temp" ? i : -1)).filter((i) => i >= 0);
        assert.ok(dataWrites.filter((i) => i < syncBegan).length >= (offsets[0] === 0 ? 2 : 4), "the ranges' writes ended before the sync began");
        const journalSync = fs.find(">", "datasync", "journal", lines);
        assert.ok(journalSync > fs.find("<", "write", "journal", lines), "the journal is synced after its lines");
        from = journalSync;
      }
      assert.equal(fs.count("datasync", "temp"), 2, "one data sync per batch, not per range");
      // The directory once, before the first line vouches for a file in it.
      const firstLines = fs.find(">", "write", "journal", 0, /"o":/);
      assert.ok(fs.find("<", "syncDirectory", "dir") < firstLines, "directory synced before the first lines");

      // Commit: time set, file fsynced, then renamed, then the directory synced, then the journal removed.
      const utimes = fs.find("<", "utimes", "temp");
      const fsync = fs.find(">", "sync", "temp");
      const rename = fs.find(">", "rename", "temp");
      const lastDirSync = fs.calls.map((c, i) => (c.edge === ">" && c.op === "syncDirectory" ? i : -1)).filter((i) => i >= 0).pop()!;
      const journalGone = fs.find(">", "unlink", "journal");
      assert.ok(utimes >= 0 && utimes < fsync, "time set before the fsync");
      assert.ok(fs.find("<", "sync", "temp") < rename, "fsync ended before the rename");
      assert.ok(fs.find("<", "rename", "temp") < lastDirSync, "directory synced after the rename");
      assert.ok(fs.find("<", "syncDirectory", "dir", lastDirSync) < journalGone, "journal removed only once the rename is durable");
      assert.equal(await readFile(join(dir, "out"), "utf8"), "aaaabbbbccccdddd");
      assert.deepEqual(await readdir(dir), ["out"]);
    });

    it(`a slice is handed to the kernel (${how}) in calls of at most MAX_WRITE_CALL bytes (large single writes cost page-cache folios from cold memory)`, async () => {
      const sink = new FileSink(join(dir, "big"), undefined, writes(), { fileSystem: fs, flush: { bytes: 1 << 30, ms: 3_600_000 } });
      await sink.claim();
      const slice = Buffer.alloc(4 * MAX_WRITE_CALL + 100);
      for (let i = 0; i < slice.length; i++) slice[i] = (i * 7) & 0xff;
      await sink.open(slice.length, { etag: '"e"', size: slice.length });
      await sink.write(1, 0, slice);
      await sink.commit({});
      const lengths = fs.calls.filter((c) => c.edge === ">" && c.op === "write" && c.file === "temp").map((c) => c.length);
      assert.deepEqual(lengths, [MAX_WRITE_CALL, MAX_WRITE_CALL, MAX_WRITE_CALL, MAX_WRITE_CALL, 100]);
      assert.ok((await readFile(join(dir, "big"))).equals(slice), "the bytes arrive whole and in place");
    });
  }

  it("an interrupted download brings its journal up to date (data sync first) before it is kept", async () => {
    const sink = new FileSink(join(dir, "k"), undefined, undefined, { fileSystem: fs, flush: { bytes: 1 << 30, ms: 3_600_000 } });
    await sink.claim();
    await sink.open(8, { etag: '"e"', size: 8 });
    await sink.write(1, 4, Buffer.from("bbbb"));
    assert.equal(fs.count("datasync", "temp"), 0, "nothing synced before the batch is due");
    assert.equal(await sink.discard(true), true);
    const lines = fs.find(">", "write", "journal", 0, /"o":4,"n":4/);
    assert.ok(lines > 0 && fs.find("<", "datasync", "temp") < lines, "the range's line follows the data sync");
    assert.ok(fs.find(">", "datasync", "journal") > lines);
    const journal = await readFile(join(dir, ".k.s3x-part.journal"), "utf8");
    assert.match(journal, /\n\{"o":4,"n":4\}\n$/);
  });

  it("a one-response object is not synced (as aws-cli and rclone): written, timed, renamed", async () => {
    const sink = new FileSink(join(dir, "small"), undefined, undefined, { fileSystem: fs });
    await sink.claim();
    await sink.open(5, { etag: '"e"', size: 5 }, false);
    await sink.write(0, 0, Buffer.from("small"));
    await sink.commit({ lastModified: new Date("2022-02-02T02:02:02Z") });
    assert.deepEqual(fs.calls.filter((c) => /sync/i.test(c.op)), []);
    assert.ok(fs.find(">", "rename", "temp") > fs.find("<", "utimes", "temp"));
    assert.deepEqual(await readdir(dir), ["small"]);
  });
});
