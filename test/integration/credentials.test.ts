import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

/**
 * A profile whose own credential provider fails says so, through the real
 * CLI against radosgw: the profile, the provider, and the provider's own
 * words (a credential_process's stderr and exit code), as aws-cli prints
 * them, instead of "Unable to locate credentials". Every run gets its own
 * HOME and AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE in a temporary
 * directory.
 *
 * Exit status: aws-cli 2.9.19 exits 255 for each of these (checked with
 * `/usr/bin/aws s3 ls` and the same files); s3x exits 1, its status for any
 * failed command, as for "Unable to locate credentials": 255 is not in its
 * table of exit codes (README, "Differences from aws-cli").
 */
describe("credential providers that fail name the profile and the provider (integration, real radosgw)", () => {
  let s3: TestS3;
  let home: string;
  let bucket: string;
  const configFile = (): string => join(home, "config");

  /** The server's endpoint and region, no credentials but the files under test. */
  const env = (): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...s3.env, HOME: home, AWS_CONFIG_FILE: configFile(), AWS_SHARED_CREDENTIALS_FILE: join(home, "credentials"), AWS_EC2_METADATA_DISABLED: "true" };
    for (const name of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"]) delete e[name];
    return e;
  };
  const ls = (profile: string): Promise<RunResult> => runS3x(["ls", `s3://${bucket}`, "--profile", profile, "--max-attempts", "1"], { env: env() });

  /** A credential_process script in the temporary HOME; returns its path. */
  async function script(name: string, body: string): Promise<string> {
    const path = join(home, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
    return path;
  }

  /** One line on stderr, exit 1. */
  function assertOneLineFailure(res: RunResult, expected: RegExp): void {
    assert.equal(res.code, 1, res.stderr);
    assert.equal(res.stderr.trim().split("\n").length, 1, res.stderr);
    assert.match(res.stderr, expected);
    assert.doesNotMatch(res.stderr, /Unable to locate credentials/);
  }

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "credentials");
    await putTestObject(s3, bucket, "a.txt", Buffer.from("signed by a process\n"));
  });

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "s3x-credentials-"));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("a credential_process that prints valid credentials signs the requests", async () => {
    const ok = await script("ok.sh", `echo '{"Version": 1, "AccessKeyId": "${s3.accessKeyId}", "SecretAccessKey": "${s3.secretAccessKey}"}'`);
    await writeFile(configFile(), `[profile ok]\ncredential_process = ${ok}\n`);
    const res = await ls("ok");
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout.toString(), /a\.txt/);
  });

  it("a credential_process that exits 1: its exit code and its stderr", async () => {
    const fail = await script("fail.sh", 'echo "SSO token expired" >&2\nexit 1');
    await writeFile(configFile(), `[profile work]\ncredential_process = ${fail}\n`);
    assertOneLineFailure(await ls("work"), new RegExp(`^s3x: ls s3://${bucket}: profile work: credential_process "${fail}" exited with code 1: SSO token expired\\n$`));
  });

  it("a credential_process that prints something other than JSON (its stderr too)", async () => {
    const text = await script("text.sh", 'echo "AccessKeyId=AKIA"\necho "helper: wrote text" >&2');
    await writeFile(configFile(), `[profile work]\ncredential_process = ${text}\n`);
    const res = await ls("work");
    assertOneLineFailure(res, new RegExp(`^s3x: ls s3://${bucket}: profile work: credential_process "${text}" printed 17 bytes that are not JSON \\(stderr: helper: wrote text\\)\\n$`));
    // What it printed may be a secret: not repeated.
    assert.doesNotMatch(res.stderr, /AKIA/);
  });

  it("a credential_process whose JSON lacks a field, or is not Version 1", async () => {
    const partial = await script("partial.sh", `echo '{"Version": 1, "AccessKeyId": "AKID"}'`);
    const v2 = await script("v2.sh", `echo '{"Version": 2, "AccessKeyId": "AKID", "SecretAccessKey": "secret"}'`);
    await writeFile(configFile(), `[profile partial]\ncredential_process = ${partial}\n[profile v2]\ncredential_process = ${v2}\n`);
    assertOneLineFailure(await ls("partial"), new RegExp(`: profile partial: credential_process "${partial}" printed JSON without SecretAccessKey\\n$`));
    assertOneLineFailure(await ls("v2"), new RegExp(`: profile v2: credential_process "${v2}" printed Version 2; only Version 1 is supported\\n$`));
  });

  it("a web-identity profile whose token file is missing", async () => {
    const token = join(home, "no-such-token");
    await writeFile(configFile(), `[profile ci]\nrole_arn = arn:aws:iam::123456789012:role/ci\nweb_identity_token_file = ${token}\n`);
    assertOneLineFailure(await ls("ci"), new RegExp(`: profile ci: web identity \\(web_identity_token_file\\): cannot read ${token}: no such file\\n$`));
  });

  it("a role chain whose source profile is missing", async () => {
    await writeFile(configFile(), "[profile deploy]\nrole_arn = arn:aws:iam::123456789012:role/deploy\nsource_profile = base\n[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = deploy\n");
    assertOneLineFailure(await ls("deploy"), /: profile deploy: assume role \(role_arn\): its source_profile "base" does not exist in the config or credentials file\n$/);
    // Two links: the broken one is named.
    assertOneLineFailure(await ls("admin"), /: profile deploy: assume role \(role_arn\): its source_profile "base" does not exist/);
  });
});
