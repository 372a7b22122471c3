import assert from "node:assert/strict";
import { closest, explainUsageError } from "../../../src/cli/usage.js";

const vocabulary = { commands: ["cp", "mv", "sync", "ls", "rm", "mb", "rb", "presign"], options: ["exclude", "include", "dryrun", "recursive", "r", "quiet", "q"] };

describe("cli/usage: naming the word at fault", () => {
  it("an unknown option is named once, with a suggestion only when it is plausibly a typo", () => {
    assert.equal(explainUsageError("Unknown argument: cache-control", ["cp", "a", "b", "--cache-control", "x"], vocabulary), "unknown option --cache-control");
    assert.equal(explainUsageError("Unknown argument: exlude", ["cp", "a", "b", "--exlude=x"], vocabulary), "unknown option --exlude (did you mean --exclude?)");
    assert.equal(explainUsageError("Unknown argument: dry-run", ["cp", "a", "b", "--dry-run"], vocabulary), "unknown option --dry-run (did you mean --dryrun?)");
  });

  it("an aws s3 command s3x lacks is said so, never 'corrected' to a near one", () => {
    assert.equal(explainUsageError("Unknown arguments: website, s3://b", ["website", "s3://b"], vocabulary), "s3x has no website command (it has cp, mv, sync, ls, rm, mb, rb, presign)");
    assert.equal(explainUsageError("Unknown arguments: snyc, a, b", ["snyc", "a", "b"], vocabulary), 'unknown command "snyc" (did you mean sync?)');
    assert.equal(explainUsageError("Unknown argument: zz", ["zz"], vocabulary), 'unknown command "zz"');
  });

  it("an extra word after a command is an unexpected argument; other messages pass through", () => {
    assert.equal(explainUsageError("Unknown argument: c", ["cp", "a", "b", "c"], vocabulary), 'unexpected argument "c"');
    assert.equal(explainUsageError("Not enough non-option arguments: got 1, need at least 2", ["cp", "a"], vocabulary), "Not enough non-option arguments: got 1, need at least 2");
  });

  it("closest: one edit for short words, two for longer, swaps count as one, prefixes match", () => {
    assert.equal(closest("mv", ["mb"]), "mb", "the function alone would: explainUsageError keeps aws's commands out");
    assert.equal(closest("sycn", ["sync", "cp"]), "sync");
    assert.equal(closest("recurs", ["recursive", "r"]), "recursive");
    assert.equal(closest("xyz", ["cp", "ls"]), undefined);
  });
});
