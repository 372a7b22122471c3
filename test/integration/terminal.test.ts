import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomFile, S3X_BIN } from "../support/cli.js";
import { freshBucket, objectExists, openUploads, testS3, type TestS3 } from "../support/s3-server.js";
import { startThrottleProxy, type ThrottleProxy } from "../support/throttle-proxy.js";
import { openTerminal, PROMPT, type Terminal } from "../support/tmux.js";

const MiB = 1024 * 1024;
const COLUMNS = 80;

/**
 * What a user sees in a real terminal (tmux) while and after s3x draws its
 * progress line: once s3x ends, the screen holds the command line, every
 * line s3x printed, complete and in order, and the next prompt on a line of
 * its own; no trace of the progress line; line wrapping never turned off.
 * The throttle proxy slows the transfers so the progress line is on screen
 * while output is printed, and for Ctrl-C to arrive mid-upload.
 */
describe("s3x on a terminal (tmux): the progress line and everything printed", function () {
  this.timeout(180_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let proxy: ThrottleProxy;
  let terminal: Terminal;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "term");
    dir = await mkdtemp(join(tmpdir(), "s3x-term-"));
    proxy = await startThrottleProxy(s3.host, s3.port);
  });

  beforeEach(async () => {
    proxy.setRate(0);
    terminal = await openTerminal({ ...s3.env, S3X_STATE_DIR: join(dir, "state") }, { columns: COLUMNS, rows: 40 });
    await terminal.run(`cd ${dir}`);
  });

  afterEach(async () => {
    await terminal?.close();
  });

  after(async () => {
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const s3x = (args: string) => `node ${S3X_BIN} ${args} --endpoint-url ${proxy.endpoint}`;

  /** The lines after the last command line, and that command line's index. */
  function afterCommand(lines: string[], marker: string): string[] {
    let at = lines.length - 1;
    while (at >= 0 && !(lines[at].startsWith(PROMPT) && lines[at].includes(marker))) at--;
    assert.ok(at >= 0, `the command line is on the screen:\n${lines.join("\n")}`);
    return lines.slice(at + 1);
  }

  /** No control left on for good: wrapping off (ESC[?7l) or a hidden cursor (ESC[?25l) not shown again. */
  function assertTerminalRestored(raw: string): void {
    assert.doesNotMatch(raw, /\x1b\[\?7l/, "line wrapping is never turned off");
    const hidden = raw.lastIndexOf("\x1b[?25l");
    assert.ok(hidden < 0 || raw.lastIndexOf("\x1b[?25h") > hidden, "the cursor is visible again");
  }

  /** Waits until the progress line shows at least `bytes` done of a known total. */
  const progressAt = (MiBDone: number) => (lines: string[]) =>
    lines.some((l) => {
      const m = /([0-9.]+) MiB \/ [0-9.]+ MiB/.exec(l);
      return m !== null && Number(m[1]) >= MiBDone;
    });

  it("after an upload: its line, then the prompt on a fresh line, and no stale progress line", async () => {
    await randomFile(join(dir, "big.bin"), 24 * MiB);
    proxy.setRate(6 * MiB);
    await terminal.run(`${s3x(`cp big.bin s3://${bucket}/big.bin --part-size 5MiB --multipart-threshold 5MiB --concurrency 2`)}; echo "exit=$?"`, {
      whileRunning: (t) => t.waitForScreen(progressAt(1)).then(() => undefined),
    });
    const lines = await terminal.screen();
    assert.deepEqual(afterCommand(lines, "big.bin"), [`upload: ./big.bin to s3://${bucket}/big.bin`, "exit=0", PROMPT.trimEnd()], lines.join("\n"));
    assert.equal((await terminal.cursor()).x, PROMPT.length, "the cursor waits after the prompt");
    assertTerminalRestored(await terminal.raw());
    // The next command's output is not erased by anything left of the last one.
    await terminal.run("echo next-command");
    assert.deepEqual(afterCommand(await terminal.screen(), "echo next-command"), ["next-command", PROMPT.trimEnd()]);
  });

  it("Ctrl-C during an upload: the kept-upload notice and the interruption stay readable, then the prompt", async () => {
    await randomFile(join(dir, "cut.bin"), 40 * MiB);
    proxy.setRate(4 * MiB);
    await terminal.run(`${s3x(`cp cut.bin s3://${bucket}/cut.bin --part-size 5MiB --multipart-threshold 5MiB --concurrency 2`)}; echo "exit=$?"`, {
      // A part is stored once 5 MiB are done: only then is there an upload to keep.
      whileRunning: async (t) => {
        await t.waitForScreen(progressAt(5));
        await t.keys("C-c");
      },
    });
    const lines = await terminal.screen();
    const shown = afterCommand(lines, "cut.bin");
    assert.equal(shown.length, 4, shown.join("\n"));
    assert.match(shown[0], new RegExp(`^s3x: kept the interrupted upload of s3://${bucket}/cut.bin \\(upload ID \\S+, \\d+ parts stored\\): run the same command with --resume to finish it, or s3x rm --uploads s3://${bucket}/cut.bin to discard it$`));
    assert.match(shown[1], /^s3x: cp cut\.bin s3:\/\/\S+: interrupted by SIGINT$/);
    assert.deepEqual(shown.slice(2), ["exit=130", PROMPT.trimEnd()]);
    assertTerminalRestored(await terminal.raw());
    assert.equal(await objectExists(s3, bucket, "cut.bin"), false);
    assert.equal(await openUploads(s3, bucket), 1, "the interrupted upload is kept for --resume");
    await terminal.run(`${s3x(`rm --uploads s3://${bucket}/cut.bin`)} --quiet`);
  });

  it("a recursive copy: every line whole (wrapped, not cut at the width), in order, the summary last, then the prompt", async () => {
    const tree = join(dir, "tree");
    await mkdir(tree);
    // Names long enough for each line to be wider than the terminal.
    const names = Array.from({ length: 12 }, (_, i) => `object-with-a-name-long-enough-to-wrap-${String(i).padStart(2, "0")}.bin`);
    for (const name of names) await randomFile(join(tree, name), 2 * MiB);
    proxy.setRate(3 * MiB);
    await terminal.run(`${s3x(`cp -r tree s3://${bucket}/tree/ --concurrency 2`)}; echo "exit=$?"`, {
      whileRunning: (t) => t.waitForScreen((lines) => lines.some((l) => /objects \|/.test(l))).then(() => undefined),
    });
    const lines = await terminal.screen();
    const shown = afterCommand(lines, "cp -r tree");
    const uploads = shown.slice(0, names.length);
    assert.deepEqual([...uploads].sort(), names.map((n) => `upload: tree/${n} to s3://${bucket}/tree/${n}`), shown.join("\n"));
    assert.ok(uploads.every((l) => l.length > COLUMNS), "the lines are wider than the terminal, and whole");
    assert.match(shown[names.length], /^cp: 12 transferred \(24 MiB\), 0 deleted, 0 skipped, 0 failed in /);
    assert.deepEqual(shown.slice(names.length + 1), ["exit=0", PROMPT.trimEnd()]);
    assertTerminalRestored(await terminal.raw());
  });
});
