/**
 * The `s3 =` section of the config file (issue #38, point 2), side by side
 * with aws-cli 2.9: the same file tunes both the same way, a flag wins.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { randomFile, runS3x } from "../support/cli.js";
import { freshBucket, testS3, type TestS3 } from "../support/s3-server.js";
import { AWS_CLI, ensureAwsCliInstalled, runCommand } from "./aws-cli.js";

describe("the config file's s3 section tunes s3x as it tunes aws-cli (real radosgw)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(300_000);
    ensureAwsCliInstalled((line) => process.stderr.write(`  [aws-cli] ${line}\n`));
    s3 = await testS3();
    bucket = await freshBucket(s3, "s3cfg");
    dir = await mkdtemp(join(tmpdir(), "s3x-s3cfg-"));
    await randomFile(join(dir, "twelve.bin"), 12 * 1024 * 1024);
    // A named profile with the nested section, as aws users write it.
    await writeFile(
      join(dir, "config"),
      [
        "[profile tuned]",
        `region = ${s3.region}`,
        "s3 =",
        "  max_concurrent_requests = 3",
        "  multipart_threshold = 5MB",
        "  multipart_chunksize = 5MB",
        "  max_queue_size = 100",
        "  addressing_style = path",
        "",
      ].join("\n"),
    );
    env = {
      PATH: process.env.PATH,
      HOME: dir,
      LANG: "C.UTF-8",
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_CONFIG_FILE: join(dir, "config"),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, "no-credentials"),
      AWS_PROFILE: "tuned",
      AWS_PAGER: "",
    };
  });

  after(() => rm(dir, { recursive: true, force: true }));

  const partsOf = async (key: string): Promise<number> => {
    const etag = (await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag ?? "";
    const match = /-(\d+)"?$/.exec(etag);
    return match ? Number(match[1]) : 1;
  };

  it("multipart_threshold and multipart_chunksize give both the same parts; max_concurrent_requests sets --concurrency", async () => {
    const theirs = await runCommand(AWS_CLI, ["--endpoint-url", s3.endpoint, "s3", "cp", "twelve.bin", `s3://${bucket}/aws/twelve.bin`], env, dir);
    assert.equal(theirs.code, 0, theirs.stderr);
    const ours = await runS3x(["cp", "twelve.bin", `s3://${bucket}/s3x/twelve.bin`, "--endpoint-url", s3.endpoint, "--debug"], { env, cwd: dir });
    assert.equal(ours.code, 0, ours.stderr.toString());
    assert.equal(await partsOf("aws/twelve.bin"), 3);
    assert.equal(await partsOf("s3x/twelve.bin"), 3);
    const debug = ours.stderr.toString();
    assert.match(debug, /max_concurrent_requests in \[profile tuned\] s3 = 3: --concurrency 3/);
    assert.match(debug, /max_queue_size in \[profile tuned\] s3: accepted, no effect/);
  });

  it("a flag wins over the file", async () => {
    const ours = await runS3x(["cp", "twelve.bin", `s3://${bucket}/flag/twelve.bin`, "--endpoint-url", s3.endpoint, "--multipart-threshold", "64MiB"], { env, cwd: dir });
    assert.equal(ours.code, 0, ours.stderr.toString());
    assert.equal(await partsOf("flag/twelve.bin"), 1);
  });

  it("a setting aws-cli would refuse is a one-line usage error naming it", async () => {
    await writeFile(join(dir, "bad-config"), "[default]\ns3 =\n  multipart_chunksize = lots\n");
    const res = await runS3x(["cp", "twelve.bin", `s3://${bucket}/bad/twelve.bin`, "--endpoint-url", s3.endpoint], { env: { ...env, AWS_PROFILE: "", AWS_CONFIG_FILE: join(dir, "bad-config") }, cwd: dir });
    assert.equal(res.code, 2);
    assert.equal(res.stderr.toString(), 's3x: multipart_chunksize in [default] s3: "lots" is not a size (e.g. 8MB, 64MiB, 8388608)\n');
  });
});
