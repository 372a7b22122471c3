import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { runS3x, S3X_BIN } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { openTerminal, PROMPT, type Terminal } from "../support/tmux.js";

const run = promisify(execFile);

/** The lines `s3x __complete WORD…` answers (the words after "s3x", the last one being completed). */
async function completions(words: string[], env: NodeJS.ProcessEnv): Promise<{ mode: string; candidates: string[]; stderr: string; code: number | null }> {
  const res = await runS3x(["__complete", ...words], { env, timeoutMs: 20_000 });
  const [mode, ...candidates] = res.stdout.toString().split("\n").filter((line) => line !== "");
  return { mode, candidates, stderr: res.stderr, code: res.code };
}

describe("s3x completion: the scripts and the candidates (the real CLI, no server)", () => {
  const env = { ...process.env, SHELL: "/bin/bash" };

  it("prints a script for the shell named, each calling back into s3x", async () => {
    const expected: Record<string, RegExp> = { bash: /^complete -F _s3x_complete s3x$/m, zsh: /^compdef _s3x s3x$/m, fish: /^complete -c s3x -f -a '\(__s3x_complete\)'$/m };
    for (const [shell, registration] of Object.entries(expected)) {
      const res = await runS3x(["completion", shell], { env });
      assert.equal(res.code, 0, res.stderr);
      const script = res.stdout.toString();
      assert.match(script, registration, `${shell} script registers its completion`);
      assert.match(script, /s3x __complete /, `${shell} script asks s3x`);
    }
  });

  it("takes the shell from $SHELL when none is named, and refuses one it has no script for", async () => {
    const zsh = await runS3x(["completion"], { env: { ...env, SHELL: "/usr/bin/zsh" } });
    assert.match(zsh.stdout.toString(), /^compdef _s3x s3x$/m);
    const fish = await runS3x(["completion"], { env: { ...env, SHELL: "/usr/local/bin/fish" } });
    assert.match(fish.stdout.toString(), /^complete -c s3x /m);
    const unknown = await runS3x(["completion"], { env: { ...env, SHELL: "/bin/tcsh" } });
    assert.match(unknown.stdout.toString(), /^complete -F _s3x_complete s3x$/m, "bash for any other shell");
    const refused = await runS3x(["completion", "tcsh"], { env });
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout.length, 0);
    assert.match(refused.stderr, /^s3x: .*unknown shell "tcsh".*bash, zsh, fish.*\n$/);
  });

  it("offers the commands, before them the shared options too", async () => {
    const commands = await completions([""], env);
    assert.equal(commands.mode, "words");
    for (const name of ["cp", "mv", "sync", "presign", "ls", "rm", "completion"]) assert.ok(commands.candidates.includes(name), `${name} in ${commands.candidates.join(",")}`);
    assert.deepEqual((await completions(["--endpoint-url", "http://h", "--quiet", "l"], env)).candidates, ["ls"]);
  });

  it("offers a command's options as its help lists them: -q and -r, --no-X for switches on by default, nothing hidden", async () => {
    const { candidates } = await completions(["cp", "-"], env);
    for (const option of ["--sse", "--acl", "--recursive", "-r", "--quiet", "-q", "--no-progress", "--no-verify-ssl", "--no-sign-request", "--no-guess-mime-type", "--endpoint-url"]) {
      assert.ok(candidates.includes(option), `${option} offered`);
    }
    for (const junk of ["--q", "--r", "--no-quiet", "--progress", "--verify-ssl", "--source", "--destination", "--output", "--query", "--cli-read-timeout", "--paginate", "--use-accelerate-endpoint", "--version"]) {
      assert.ok(!candidates.includes(junk), `${junk} not offered`);
    }
    // Options before the command, then the command, then an option.
    const negated = await completions(["--quiet", "cp", "--no-"], env);
    assert.deepEqual(negated.candidates, ["--no-follow-symlinks", "--no-guess-mime-type", "--no-progress", "--no-sign-request", "--no-verify-ssl"]);
  });

  it("leaves local paths and option values to the shell's file completion", async () => {
    assert.equal((await completions(["cp", "./"], env)).mode, "files");
    assert.equal((await completions(["cp", "--from", ""], env)).mode, "files");
    assert.deepEqual((await completions(["ls", "s3"], env)).candidates, ["s3://"]);
  });
});

describe("s3x completion of S3 URLs and in real shells (radosgw, tmux, fish)", function () {
  this.timeout(180_000);
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  /** The environment of a user who has s3x on PATH and credentials for the test server. */
  let userEnv: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(300_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "complete");
    for (const key of ["prefix/a.bin", "prefix/c d.txt", "prefix/sub/b.bin", "other.txt"]) await putTestObject(s3, bucket, key, Buffer.from(key));
    dir = await mkdtemp(join(tmpdir(), "s3x-complete-"));
    // The scripts call `s3x` by name, as on a user's machine.
    await writeFile(join(dir, "s3x"), `#!/bin/sh\nexec '${process.execPath}' '${S3X_BIN}' "$@"\n`);
    await chmod(join(dir, "s3x"), 0o755);
    userEnv = { ...s3.env, PATH: `${dir}:${process.env.PATH}`, HOME: dir, XDG_CONFIG_HOME: join(dir, "config"), XDG_DATA_HOME: join(dir, "data") };
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("lists buckets, then one level under a prefix (sub-prefixes end in /), with the user's credentials and endpoint", async () => {
    const buckets = await completions(["ls", "s3://"], userEnv);
    assert.ok(buckets.candidates.includes(`s3://${bucket}/`), `s3://${bucket}/ in ${buckets.candidates.length} candidates`);
    assert.deepEqual((await completions(["cp", `s3://${bucket.slice(0, -2)}`], userEnv)).candidates, [`s3://${bucket}/`]);
    assert.deepEqual((await completions(["cp", `s3://${bucket}/pre`], userEnv)).candidates, [`s3://${bucket}/prefix/`]);
    assert.deepEqual((await completions(["cp", `s3://${bucket}/prefix/`], userEnv)).candidates, [`s3://${bucket}/prefix/a.bin`, `s3://${bucket}/prefix/c d.txt`, `s3://${bucket}/prefix/sub/`]);
    assert.deepEqual((await completions(["rm", `s3://${bucket}/`], userEnv)).candidates, [`s3://${bucket}/other.txt`, `s3://${bucket}/prefix/`]);
  });

  it("a listing that fails or hangs completes nothing, prints no error, and ends within the budget", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await completions(["--endpoint-url", `http://127.0.0.1:${closedPort}`, "ls", "s3://"], userEnv);
    assert.deepEqual(refused, { mode: "words", candidates: [], stderr: "", code: 0 });
    const denied = await completions(["ls", `s3://${bucket}/`], { ...userEnv, AWS_SECRET_ACCESS_KEY: "wrong" });
    assert.deepEqual(denied, { mode: "words", candidates: [], stderr: "", code: 0 });
    // A server that accepts connections and never answers.
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const started = Date.now();
      const hung = await completions(["ls", "s3://"], { ...userEnv, AWS_ENDPOINT_URL: `http://127.0.0.1:${(silent.address() as { port: number }).port}` });
      const elapsedMs = Date.now() - started;
      assert.deepEqual(hung, { mode: "words", candidates: [], stderr: "", code: 0 });
      assert.ok(sockets.length > 0, "s3x did try the silent server");
      // 2 s of budget, plus Node's start-up on a loaded machine.
      assert.ok(elapsedMs < 6_000, `gave up after ${elapsedMs} ms`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  for (const shell of ["bash", "zsh"] as const) {
    describe(`in ${shell} (tmux)`, () => {
      let terminal: Terminal;
      // bash lists every candidate without asking or paging; zsh lists them all below the line.
      const init = shell === "bash"
        ? ["bind 'set completion-query-items 100000'", "bind 'set page-completions off'", "source <(s3x completion bash)"]
        : ["LISTMAX=100000", "source <(s3x completion zsh)"];

      beforeEach(async () => {
        terminal = await openTerminal(userEnv, { columns: 200, rows: 50 }, { shell, init });
        await terminal.run(`cd ${dir}`);
      });

      afterEach(async () => {
        await terminal?.close();
      });

      /** Types `text` and presses Tab (twice in bash, which lists the candidates on the second). */
      async function typeAndTab(text: string, tabs = shell === "bash" ? 2 : 1): Promise<void> {
        if (text) {
          await terminal.keys("-l", text);
          await terminal.waitForScreen((lines) => (lines.at(-1) ?? "").endsWith(text));
        }
        for (let i = 0; i < tabs; i++) await terminal.keys("Tab");
      }

      it("s3x ls s3://<Tab> lists the buckets", async () => {
        // However the buckets' names begin: one Tab may insert the part they share, and the next ones list them.
        await typeAndTab("s3x ls s3://", shell === "bash" ? 3 : 2);
        const lines = await terminal.waitForScreen((l) => l.some((line) => line.includes(`${bucket}/`)), 20_000);
        assert.ok(!lines.some((line) => /\b(bin|etc|usr)\/(\s|$)/.test(line)), `no local directory listed:\n${lines.join("\n")}`);
      });

      it("s3x cp --no-<Tab> offers the --no- forms", async () => {
        await typeAndTab("s3x cp --no-");
        const lines = await terminal.waitForScreen((l) => l.some((line) => line.includes("--no-progress")) && l.some((line) => line.includes("--no-verify-ssl")), 20_000);
        assert.ok(!lines.some((line) => line.includes("--no-quiet")), lines.join("\n"));
      });

      it("s3x cp s3://BUCKET/pre<Tab> completes the prefix (no space after its /), then lists one level under it", async () => {
        await typeAndTab(`s3x cp s3://${bucket}/pre`, 1);
        const completed = `${PROMPT}s3x cp s3://${bucket}/prefix/`;
        await terminal.waitForScreen((lines) => lines.at(-1) === completed, 20_000);
        assert.equal((await terminal.cursor()).x, completed.length, "the cursor right after the /, no space");
        await typeAndTab("", 2);
        // bash lists them by their last part (as files), zsh as whole URLs.
        const listed = (l: string[]) => l.filter((line) => !line.startsWith(PROMPT));
        const lines = await terminal.waitForScreen((l) => listed(l).some((line) => line.includes("a.bin")) && listed(l).some((line) => line.includes("sub/")), 20_000);
        assert.ok(!lines.some((line) => line.includes("sub/b.bin")), `one level only:\n${lines.join("\n")}`);
      });

      it("s3x cp s3://BUCKET/prefix/a<Tab> completes the key, then a space", async () => {
        await typeAndTab(`s3x cp s3://${bucket}/prefix/a`, 1);
        await terminal.waitForScreen((lines) => lines.at(-1) === `${PROMPT}s3x cp s3://${bucket}/prefix/a.bin`, 20_000);
        assert.equal((await terminal.cursor()).x, `${PROMPT}s3x cp s3://${bucket}/prefix/a.bin `.length);
      });

      it("a key with a space is inserted quoted", async () => {
        await typeAndTab(`s3x cp s3://${bucket}/prefix/c`, 1);
        await terminal.waitForScreen((lines) => lines.at(-1) === `${PROMPT}s3x cp s3://${bucket}/prefix/c\\ d.txt`, 20_000);
      });
    });
  }

  it("in fish: the script's completions are s3x's", async () => {
    const fish = (commandLine: string) =>
      run("fish", ["--no-config", "-c", `s3x completion fish | source; complete -C ${JSON.stringify(commandLine)}`], { env: userEnv }).then(({ stdout }) => stdout.split("\n").filter((l) => l !== ""));
    const negated = await fish("s3x cp --no-");
    for (const option of ["--no-progress", "--no-verify-ssl"]) assert.ok(negated.includes(option), `${option} in ${negated.join(",")}`);
    assert.ok((await fish("s3x ls s3://")).includes(`s3://${bucket}/`));
    assert.deepEqual(await fish(`s3x cp s3://${bucket}/prefix/`), [`s3://${bucket}/prefix/a.bin`, `s3://${bucket}/prefix/c d.txt`, `s3://${bucket}/prefix/sub/`]);
  });
});
