/**
 * Every option `aws s3 COMMAND help` lists (aws-cli 2.9.19, global options
 * included) is accepted by s3x (issue #38, point 1): applied with aws-cli's
 * meaning, or accepted with no effect as docs/aws-cli-options.md says; none
 * is a usage error. The lists were taken from `aws s3 COMMAND help` (the
 * SYNOPSIS); --version is left out (it answers before any command).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectAclCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { runS3x } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const GLOBAL = "--ca-bundle --cli-auto-prompt --cli-binary-format --cli-connect-timeout --cli-read-timeout --color --debug --endpoint-url --no-cli-auto-prompt --no-cli-pager --no-paginate --no-sign-request --no-verify-ssl --output --profile --query --region";
const TRANSFER = "--acl --cache-control --content-disposition --content-encoding --content-language --content-type --copy-props --dryrun --exclude --expires --follow-symlinks --force-glacier-transfer --grants --ignore-glacier-warnings --include --metadata --metadata-directive --no-follow-symlinks --no-guess-mime-type --no-progress --only-show-errors --page-size --quiet --request-payer --source-region --sse --sse-c --sse-c-copy-source --sse-c-copy-source-key --sse-c-key --sse-kms-key-id --storage-class --website-redirect";

/** `aws s3 COMMAND help`'s options, by command. */
const AWS_OPTIONS: Record<string, string> = {
  cp: `${GLOBAL} ${TRANSFER} --expected-size --recursive`,
  mv: `${GLOBAL} ${TRANSFER} --recursive`,
  sync: `${GLOBAL} ${TRANSFER} --delete --exact-timestamps --size-only`,
  rm: `${GLOBAL} --dryrun --exclude --include --only-show-errors --page-size --quiet --recursive --request-payer`,
  ls: `${GLOBAL} --human-readable --page-size --recursive --request-payer --summarize`,
  mb: GLOBAL,
  rb: `${GLOBAL} --force`,
  presign: `${GLOBAL} --expires-in`,
};

/** The words an option is given with, where it takes a value or needs a partner to make sense. */
const KEY32 = "0123456789abcdef0123456789abcdef";
function withValue(option: string, s3: TestS3): string[] {
  const values: Record<string, string[]> = {
    "--acl": ["private"],
    "--ca-bundle": ["/etc/ssl/certs/ca-certificates.crt"],
    "--cache-control": ["no-cache"],
    "--cli-binary-format": ["raw-in-base64-out"],
    "--cli-connect-timeout": ["5"],
    "--cli-read-timeout": ["0"],
    "--color": ["off"],
    "--content-disposition": ["inline"],
    "--content-encoding": ["identity"],
    "--content-language": ["en"],
    "--content-type": ["text/plain"],
    "--copy-props": ["default"],
    "--endpoint-url": [s3.endpoint],
    "--exclude": ["*.tmp"],
    "--include": ["*.txt"],
    "--expected-size": ["100"],
    "--expires": ["2030-01-01T00:00:00Z"],
    "--expires-in": ["60"],
    "--grants": ["read=uri=http://acs.amazonaws.com/groups/global/AllUsers"],
    "--metadata": ["a=b"],
    "--metadata-directive": ["REPLACE"],
    "--output": ["json"],
    "--page-size": ["100"],
    "--profile": ["default"],
    "--query": ["Contents"],
    "--region": [s3.region],
    "--request-payer": ["requester"],
    "--source-region": [s3.region],
    "--sse": ["AES256"],
    "--storage-class": ["STANDARD"],
    "--website-redirect": ["/elsewhere"],
  };
  if (option === "--sse-kms-key-id") return ["--sse", "aws:kms", option, "key-1"];
  if (option === "--sse-c" || option === "--sse-c-key") return ["--sse-c", "AES256", "--sse-c-key", KEY32];
  if (option === "--sse-c-copy-source" || option === "--sse-c-copy-source-key") return ["--sse-c-copy-source", "AES256", "--sse-c-copy-source-key", KEY32];
  return [option, ...(values[option] ?? [])];
}

describe("every option of aws s3 COMMAND help is accepted by s3x (real radosgw)", function () {
  let s3: TestS3;
  let bucket: string;
  let dir: string;

  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "awsopts");
    await putTestObject(s3, bucket, "src/a.txt", Buffer.from("a\n"));
    dir = await mkdtemp(join(tmpdir(), "s3x-awsopts-"));
    await writeFile(join(dir, "a.txt"), "a\n");
    // --profile default needs a config file that has it.
    await writeFile(join(dir, "config"), `[default]\nregion = ${s3.region}\naws_access_key_id = ${s3.accessKeyId}\naws_secret_access_key = ${s3.secretAccessKey}\n`);
    env = { ...s3.env, AWS_CONFIG_FILE: join(dir, "config") };
  });

  after(() => rm(dir, { recursive: true, force: true }));

  /** A command line of each command that sends nothing, or nothing that changes anything. */
  const commandLine = (command: string, option: string): string[] => {
    const s3Copy = option.startsWith("--sse-c-copy-source");
    switch (command) {
      case "cp":
      case "mv":
        if (option === "--expected-size") return [command, "-", `s3://${bucket}/dst/a.txt`, "--dryrun"];
        if (option === "--recursive") return [command, `s3://${bucket}/src/`, `s3://${bucket}/dst/`, "--dryrun"];
        return s3Copy ? [command, `s3://${bucket}/src/a.txt`, `s3://${bucket}/dst/a.txt`, "--dryrun"] : [command, "a.txt", `s3://${bucket}/dst/a.txt`, "--dryrun"];
      case "sync":
        return s3Copy ? [command, `s3://${bucket}/src/`, `s3://${bucket}/dst/`, "--dryrun"] : [command, ".", `s3://${bucket}/dst/`, "--dryrun"];
      case "rm":
        return [command, `s3://${bucket}/src/a.txt`, "--dryrun"];
      case "ls":
        return [command, `s3://${bucket}/src/`];
      case "mb":
        return [command, `s3://${bucket}`]; // exists already: the server refuses it (exit 1), the parser must not
      case "rb":
        return [command, `s3://${bucket}-missing`]; // no such bucket: exit 1
      default:
        return [command, `s3://${bucket}/src/a.txt`];
    }
  };

  for (const [command, list] of Object.entries(AWS_OPTIONS)) {
    it(`${command}: ${list.split(" ").length} options, none refused`, async function () {
      this.timeout(300_000);
      const refused: string[] = [];
      for (const option of list.split(" ")) {
        const words = [...commandLine(command, option), ...withValue(option, s3)];
        const endpoint = words.includes("--endpoint-url") ? [] : ["--endpoint-url", s3.endpoint];
        // --no-sign-request leaves the request unsigned: the server may refuse it (exit 1), the parser must not.
        const res = await runS3x([...words, ...endpoint], { env, cwd: dir, stdin: Buffer.from("x") });
        const stderr = res.stderr.toString();
        if (res.code === 2 || /unknown option|unexpected argument/.test(stderr)) refused.push(`${words.join(" ")} → exit ${res.code}: ${stderr.trim()}`);
      }
      assert.deepEqual(refused, []);
    });
  }

  it("--grants, --website-redirect and --no-guess-mime-type reach the stored object, as aws-cli's", async function () {
    this.timeout(120_000);
    const allUsers = "http://acs.amazonaws.com/groups/global/AllUsers";
    const res = await runS3x(["cp", "a.txt", `s3://${bucket}/applied/a.txt`, "--grants", `read=uri=${allUsers}`, "--website-redirect", "/elsewhere", "--no-guess-mime-type", "--endpoint-url", s3.endpoint], { env, cwd: dir });
    assert.equal(res.code, 0, res.stderr.toString());
    const acl = await s3.client.send(new GetObjectAclCommand({ Bucket: bucket, Key: "applied/a.txt" }));
    assert.ok(acl.Grants?.some((g) => g.Grantee?.URI === allUsers && g.Permission === "READ"), JSON.stringify(acl.Grants));
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: "applied/a.txt" }));
    assert.equal(head.WebsiteRedirectLocation, "/elsewhere");
    assert.equal(head.ContentType, "application/octet-stream");
  });

  it("a bad --grants is a usage error naming it", async () => {
    const res = await runS3x(["cp", "a.txt", `s3://${bucket}/applied/b.txt`, "--grants", "write=id=x", "--endpoint-url", s3.endpoint], { env, cwd: dir });
    assert.equal(res.code, 2);
    assert.equal(res.stderr.toString(), `s3x: cp a.txt s3://${bucket}/applied/b.txt: --grants "write=id=x": permission must be one of: read|readacl|writeacl|full\n`);
  });
});
