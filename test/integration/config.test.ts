import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runS3x, type RunResult } from "../support/cli.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";
import { signingRegion, startRecordingProxy, type RecordingProxy } from "../support/recording-proxy.js";
import { startDnsServer, type TestDnsServer } from "../support/dns-server.js";

/**
 * Region, endpoint, profile and credentials as aws-cli v2 resolves them,
 * through the real CLI against radosgw. Every run gets its own HOME and
 * AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE in a temporary directory,
 * and a test DNS server (--dns-server) that knows no name, so a run that
 * would go to AWS fails on the spot instead of asking a real resolver.
 */
describe("configuration as aws-cli resolves it (integration, real radosgw)", () => {
  let s3: TestS3;
  let proxy: RecordingProxy;
  let dns: TestDnsServer;
  let home: string;
  let bucket: string;
  const configFile = (): string => join(home, "config");
  const credentialsFile = (): string => join(home, "credentials");
  const keys = (): string => `aws_access_key_id = ${s3.accessKeyId}\naws_secret_access_key = ${s3.secretAccessKey}\n`;

  /** s3's environment without any region, endpoint or credentials: each test adds what it means to test. */
  const bareEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...s3.env, HOME: home, AWS_CONFIG_FILE: configFile(), AWS_SHARED_CREDENTIALS_FILE: credentialsFile(), AWS_EC2_METADATA_DISABLED: "true", ...extra };
    for (const name of ["AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"]) {
      if (!(name in extra)) delete env[name];
    }
    return env;
  };
  const withKeys = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => bareEnv({ AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, ...extra });
  const s3x = (args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> => runS3x([...args, "--dns-server", dns.server, "--max-attempts", "1"], { env });
  const regionsSigned = (): Set<string | undefined> => new Set(proxy.requests.map((r) => signingRegion(r.authorization)));

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "config");
    await putTestObject(s3, bucket, "a.txt", Buffer.from("configured\n"));
    proxy = await startRecordingProxy(s3.host, s3.port);
    dns = await startDnsServer();
  });

  after(async () => {
    await proxy?.close();
    await dns?.close();
  });

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "s3x-config-"));
    proxy.requests.length = 0;
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("signs for the profile's region when an endpoint is given", async () => {
    await writeFile(configFile(), "[profile dev]\nregion = eu-west-3\n");
    const res = await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint], withKeys({ AWS_PROFILE: "dev" }));
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout.toString(), /a\.txt/);
    assert.deepEqual(regionsSigned(), new Set(["eu-west-3"]));
  });

  it("--region and $AWS_REGION win over the profile's region", async () => {
    await writeFile(configFile(), "[default]\nregion = eu-west-3\n");
    assert.equal((await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint, "--region", "ap-south-2"], withKeys({ AWS_REGION: "sa-east-1" }))).code, 0);
    assert.equal((await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint], withKeys({ AWS_REGION: "sa-east-1" }))).code, 0);
    assert.deepEqual(proxy.requests.map((r) => signingRegion(r.authorization)), ["ap-south-2", "sa-east-1"]);
  });

  it("uses us-east-1 when no region is configured anywhere, with or without an endpoint", async () => {
    const withEndpoint = await s3x(["cp", `s3://${bucket}/a.txt`, "-", "--endpoint-url", proxy.endpoint], withKeys());
    assert.equal(withEndpoint.code, 0, withEndpoint.stderr);
    assert.equal(withEndpoint.stdout.toString(), "configured\n");
    assert.deepEqual(regionsSigned(), new Set(["us-east-1"]));
    // Without an endpoint, AWS's us-east-1 endpoint (which the test DNS server does not know), not "Region is missing".
    const aws = await s3x(["ls"], withKeys());
    assert.equal(aws.code, 1);
    assert.match(aws.stderr, /could not connect to the endpoint URL "https:\/\/s3\.us-east-1\.amazonaws\.com:443\//);
  });

  it("takes the endpoint from the profile's endpoint_url, with the profile's credentials", async () => {
    await writeFile(configFile(), `[profile dev]\nregion = eu-north-1\nendpoint_url = ${proxy.endpoint}\n`);
    await writeFile(credentialsFile(), `[dev]\n${keys()}`);
    const res = await s3x(["ls", `s3://${bucket}`, "--profile", "dev"], bareEnv());
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout.toString(), /a\.txt/);
    assert.deepEqual(regionsSigned(), new Set(["eu-north-1"]));
  });

  it("takes the endpoint from the [services] section the profile names (s3 sub-section)", async () => {
    await writeFile(configFile(), `[profile dev]\nservices = local-s3\n\n[services local-s3]\ns3 =\n  endpoint_url = ${proxy.endpoint}\n  addressing_style = path\n`);
    await writeFile(credentialsFile(), `[dev]\n${keys()}`);
    const res = await s3x(["cp", `s3://${bucket}/a.txt`, "-", "--profile", "dev"], bareEnv());
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.toString(), "configured\n");
    assert.ok(proxy.requests.length > 0);
  });

  it("says so when the profile names a [services] section that is not there", async () => {
    await writeFile(configFile(), "[profile dev]\nservices = nowhere\n");
    await writeFile(credentialsFile(), `[dev]\n${keys()}`);
    const res = await s3x(["ls", `s3://${bucket}`, "--profile", "dev"], bareEnv());
    assert.equal(res.code, 2);
    assert.match(res.stderr, /\[services nowhere\]/);
    assert.equal(proxy.requests.length, 0);
  });

  it("ignores configured endpoints with $AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or ignore_configured_endpoint_urls, never --endpoint-url", async () => {
    await writeFile(configFile(), `[default]\nendpoint_url = ${proxy.endpoint}\n`);
    const fromEnv = await s3x(["ls", `s3://${bucket}`], withKeys({ AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: "true", AWS_ENDPOINT_URL: proxy.endpoint }));
    assert.equal(fromEnv.code, 1);
    assert.match(fromEnv.stderr, /could not connect to the endpoint URL "https:\/\/[^"]*amazonaws\.com:443\//);
    await writeFile(configFile(), `[default]\nignore_configured_endpoint_urls = true\nendpoint_url = ${proxy.endpoint}\n`);
    const fromConfig = await s3x(["ls", `s3://${bucket}`], withKeys({ AWS_ENDPOINT_URL_S3: proxy.endpoint }));
    assert.equal(fromConfig.code, 1);
    assert.match(fromConfig.stderr, /amazonaws\.com:443/);
    assert.equal(proxy.requests.length, 0, "no configured endpoint was used");
    const flag = await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint], withKeys({ AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: "true" }));
    assert.equal(flag.code, 0, flag.stderr);
    assert.ok(proxy.requests.length > 0);
  });

  it("names a profile that does not exist, from --profile or $AWS_PROFILE", async () => {
    await writeFile(configFile(), "[profile dev]\nregion = eu-west-3\n");
    for (const [args, env] of [[["--profile", "nope"], withKeys()], [[], withKeys({ AWS_PROFILE: "nope" })]] as const) {
      const res = await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint, ...args], env);
      assert.equal(res.code, 2);
      assert.equal(res.stderr, `s3x: ls s3://${bucket}: The config profile (nope) could not be found\n`);
    }
    assert.equal(proxy.requests.length, 0);
  });

  it("uses $AWS_ACCESS_KEY_ID with $AWS_PROFILE, but --profile's credentials only", async () => {
    await writeFile(configFile(), "[profile nokeys]\nregion = eu-west-3\n");
    const envKeys = await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint], withKeys({ AWS_PROFILE: "nokeys" }));
    assert.equal(envKeys.code, 0, envKeys.stderr);
    assert.equal(envKeys.stderr, "");
    const flag = await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint, "--profile", "nokeys"], withKeys());
    assert.equal(flag.code, 1);
    assert.match(flag.stderr, /^s3x: ls s3:\/\/[^:]+: Unable to locate credentials: set AWS_ACCESS_KEY_ID/);
    assert.equal(flag.stderr.trim().split("\n").length, 1, flag.stderr);
  });

  it("says Unable to locate credentials when there are none", async () => {
    const res = await s3x(["ls", `s3://${bucket}`, "--endpoint-url", proxy.endpoint], bareEnv());
    assert.equal(res.code, 1);
    assert.match(res.stderr, /Unable to locate credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    assert.equal(proxy.requests.length, 0);
  });

  it("names the host and port it could not connect to (refused, unknown name)", async () => {
    const closedPort = await freePort();
    const refused = await s3x(["ls", `s3://${bucket}`, "--endpoint-url", `http://127.0.0.1:${closedPort}`], withKeys());
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`ECONNREFUSED: connection refused: could not connect to the endpoint URL "http://127\\.0\\.0\\.1:${closedPort}/${bucket}/\\?[^"]*" via 127\\.0\\.0\\.1\\n$`));
    // An unknown name under .invalid, asked of the test DNS server only (--dns-server), which has no answer.
    const unknown = await s3x(["cp", `s3://${bucket}/a.txt`, "-", "--endpoint-url", "http://no-such-host.s3x-test.invalid:8080"], withKeys());
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /ENOTFOUND: .*could not connect to the endpoint URL "http:\/\/no-such-host\.s3x-test\.invalid:8080\//);
    assert.ok(dns.queries("no-such-host.s3x-test.invalid") > 0, "the test DNS server was asked");
  });
});

/** A local TCP port nobody listens on: bound once by the OS, then released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
