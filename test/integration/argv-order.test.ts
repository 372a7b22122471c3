/** Options before the command, `s3x help COMMAND` and `-h` (issue #38, point 4), through the real CLI. */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runS3x } from "../support/cli.js";
import { freshBucket, testS3, type TestS3 } from "../support/s3-server.js";

describe("options before the command, help COMMAND, -h (real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  const s3x = (args: string[]) => runS3x(args, { env: s3.env, cwd: dir });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "argv");
    dir = await mkdtemp(join(tmpdir(), "s3x-argv-"));
    await mkdir(join(dir, "src", "sub"), { recursive: true });
    await writeFile(join(dir, "src", "a.txt"), "a\n");
    await writeFile(join(dir, "src", "sub", "b.bin"), "b\n");
  });

  after(() => rm(dir, { recursive: true, force: true }));

  it("s3x --recursive --dryrun cp DIR URL does what cp DIR URL --recursive --dryrun does", async () => {
    const after = await s3x(["cp", "src", `s3://${bucket}/p/`, "--recursive", "--dryrun", "--endpoint-url", s3.endpoint]);
    assert.equal(after.code, 0, after.stderr.toString());
    const before = await s3x(["--recursive", "--dryrun", "--endpoint-url", s3.endpoint, "--exclude", "cp", "cp", "src", `s3://${bucket}/p/`]);
    assert.equal(before.code, 0, before.stderr.toString());
    const lines = (out: Buffer) => out.toString().split("\n").filter(Boolean).sort();
    assert.deepEqual(lines(before.stdout), lines(after.stdout));
    assert.equal(lines(before.stdout).length, 2);
  });

  it("s3x -q ls --recursive URL lists as ls does", async () => {
    await s3x(["cp", "src/a.txt", `s3://${bucket}/q/a.txt`, "--endpoint-url", s3.endpoint]);
    const res = await s3x(["-q", "--endpoint-url", s3.endpoint, "ls", "--recursive", `s3://${bucket}/q/`]);
    assert.equal(res.code, 0, res.stderr.toString());
    assert.match(res.stdout.toString(), /q\/a\.txt\n$/);
  });

  it("s3x help cp prints cp's help, s3x help and -h the top help, exit 0", async () => {
    const cpHelp = await s3x(["cp", "--help"]);
    const helpCp = await s3x(["help", "cp"]);
    assert.equal(helpCp.code, 0, helpCp.stderr.toString());
    assert.equal(helpCp.stdout.toString(), cpHelp.stdout.toString());
    assert.match(helpCp.stdout.toString(), /^s3x cp <source>/);
    const top = await s3x(["--help"]);
    for (const asked of [["-h"], ["help"]]) {
      const res = await s3x(asked);
      assert.equal(res.code, 0, `${asked.join(" ")}: ${res.stderr.toString()}`);
      assert.equal(res.stdout.toString(), top.stdout.toString());
    }
  });
});
