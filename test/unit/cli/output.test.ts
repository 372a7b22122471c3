import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const outputModule = fileURLToPath(new URL("../../../src/cli/output.js", import.meta.url));

/**
 * Runs a child that prints `lines` lines through StdoutLines (without
 * waiting, as per-object lines are printed), then awaits `settled()` and
 * reports on stderr whether the broken pipe reached it; its stdout is read
 * by `reader` (a shell pipeline stage).
 */
function printThenSettle(lines: number, reader: string): string {
  const child = `
    import { StdoutLines } from ${JSON.stringify(outputModule)};
    let broken = "none";
    const out = new StdoutLines((err) => { broken = err.code ?? err.message; });
    for (let i = 0; i < ${lines}; i++) out.print("line " + String(i).padStart(6, "0") + " " + "x".repeat(40) + "\\n");
    const before = broken;
    await out.settled();
    process.stderr.write("before=" + before + " after=" + broken);
  `;
  const run = spawnSync("bash", ["-c", `node --input-type=module -e '${child.replace(/'/g, "'\\''")}' | ${reader}`], { encoding: "utf8" });
  return run.stderr.trim();
}

describe("cli/output: StdoutLines", () => {
  it("settled() reports a reader that went away, though the printing loop ended before the pipe failed", () => {
    // 2,000 lines (~110 KB) cannot all fit in a 64 KiB pipe whose reader takes one line and leaves.
    const report = printThenSettle(2000, "head -1 > /dev/null");
    assert.equal(report, "before=none after=EPIPE");
  });

  it("settled() resolves quietly when the reader takes everything", () => {
    assert.equal(printThenSettle(2000, "wc -l > /dev/null"), "before=none after=none");
  });
});
