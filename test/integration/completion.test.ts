import assert from "node:assert/strict";
import { runS3x } from "../support/cli.js";

describe("s3x completion (the real CLI, no server)", () => {
  const env = { ...process.env, SHELL: "/bin/bash" };

  it("prints a bash completion script that asks s3x for completions", async () => {
    const res = await runS3x(["completion"], { env });
    assert.equal(res.code, 0, res.stderr);
    const script = res.stdout.toString();
    assert.match(script, /complete -o bashdefault -o default -F _s3x_yargs_completions s3x/);
    assert.match(script, /s3x --get-yargs-completions/);
  });

  it("lists the commands, and a command's options", async () => {
    const commands = await runS3x(["--get-yargs-completions", "s3x", ""], { env });
    assert.equal(commands.code, 0, commands.stderr);
    const names = commands.stdout.toString().split("\n");
    for (const name of ["cp", "mv", "sync", "presign", "ls", "rm"]) assert.ok(names.includes(name), `${name} in ${names.join(",")}`);
    const options = await runS3x(["--get-yargs-completions", "s3x", "cp", "--"], { env });
    const listed = options.stdout.toString().split("\n");
    for (const option of ["--sse", "--acl", "--cache-control", "--recursive", "--expected-size"]) assert.ok(listed.includes(option), `${option} listed`);
  });
});
