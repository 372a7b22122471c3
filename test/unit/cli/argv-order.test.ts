import assert from "node:assert/strict";
import { commandFirst } from "../../../src/cli/argv-order.js";

describe("commandFirst: options before the command, help COMMAND", () => {
  const commands = ["cp", "ls", "sync", "rm"];
  const flags = new Set(["recursive", "r", "dryrun", "quiet", "q", "no-progress", "help"]);
  const order = (...argv: string[]) => commandFirst(argv, commands, (name) => flags.has(name));

  it("leaves a command line that starts with its command as it is", () => {
    assert.deepEqual(order("cp", "a", "s3://b/", "--recursive"), ["cp", "a", "s3://b/", "--recursive"]);
  });
  it("moves the command before flags typed first", () => {
    assert.deepEqual(order("--recursive", "--dryrun", "cp", "a", "s3://b/"), ["cp", "--recursive", "--dryrun", "a", "s3://b/"]);
    assert.deepEqual(order("-rq", "ls", "s3://b/"), ["ls", "-rq", "s3://b/"]);
  });
  it("skips an option's value, even one spelled like a command", () => {
    assert.deepEqual(order("--exclude", "ls", "cp", "a", "s3://b/"), ["cp", "--exclude", "ls", "a", "s3://b/"]);
    assert.deepEqual(order("--endpoint-url=http://x", "ls"), ["ls", "--endpoint-url=http://x"]);
  });
  it("does not reach past the first plain word for a command", () => {
    assert.deepEqual(order("--quiet", "a", "cp"), ["--quiet", "a", "cp"]);
    assert.deepEqual(order("--", "cp"), ["--", "cp"]);
  });
  it("reads help COMMAND as COMMAND --help, and help alone as --help", () => {
    assert.deepEqual(order("help", "cp"), ["cp", "--help"]);
    assert.deepEqual(order("help"), ["--help"]);
  });
});
