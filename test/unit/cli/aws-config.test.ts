import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveAwsConfig } from "../../../src/cli/aws-config.js";
import { UsageError } from "../../../src/plan/location.js";

describe("resolveAwsConfig (aws-cli v2's order of precedence)", () => {
  let dir: string;
  let serial = 0;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "s3x-aws-config-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** An environment whose config and credentials files hold the given text (new paths each time: the SDK caches reads by path). */
  async function filesEnv(config: string, credentials = "", extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
    serial++;
    const configPath = join(dir, `config-${serial}`);
    const credentialsPath = join(dir, `credentials-${serial}`);
    await writeFile(configPath, config);
    await writeFile(credentialsPath, credentials);
    return { AWS_CONFIG_FILE: configPath, AWS_SHARED_CREDENTIALS_FILE: credentialsPath, ...extra };
  }

  it("region: --region, then $AWS_REGION, $AWS_DEFAULT_REGION, the profile's, else us-east-1", async () => {
    const config = "[default]\nregion = eu-west-3\n";
    assert.equal((await resolveAwsConfig({ region: "ap-south-2" }, await filesEnv(config, "", { AWS_REGION: "sa-east-1" }))).region, "ap-south-2");
    assert.equal((await resolveAwsConfig({}, await filesEnv(config, "", { AWS_REGION: "sa-east-1", AWS_DEFAULT_REGION: "ca-central-1" }))).region, "sa-east-1");
    assert.equal((await resolveAwsConfig({}, await filesEnv(config, "", { AWS_DEFAULT_REGION: "ca-central-1" }))).region, "ca-central-1");
    assert.equal((await resolveAwsConfig({}, await filesEnv(config))).region, "eu-west-3");
    const none = await resolveAwsConfig({}, await filesEnv(""));
    assert.equal(none.region, "us-east-1");
    assert.equal(none.endpointUrl, undefined);
  });

  it("endpoint: $AWS_ENDPOINT_URL_S3, then $AWS_ENDPOINT_URL, the [services] s3 endpoint_url, the profile's endpoint_url", async () => {
    const config = "[default]\nendpoint_url = http://profile:1\nservices = mine\n[services mine]\ns3 =\n  endpoint_url = http://services:2\ndynamodb =\n  endpoint_url = http://dynamo:3\n";
    const at = async (extra: NodeJS.ProcessEnv) => (await resolveAwsConfig({}, await filesEnv(config, "", extra))).endpointUrl;
    assert.equal(await at({ AWS_ENDPOINT_URL_S3: "http://s3env:4", AWS_ENDPOINT_URL: "http://env:5" }), "http://s3env:4");
    assert.equal(await at({ AWS_ENDPOINT_URL: "http://env:5" }), "http://env:5");
    assert.equal(await at({}), "http://services:2");
    assert.equal((await resolveAwsConfig({}, await filesEnv("[default]\nendpoint_url = http://profile:1\n"))).endpointUrl, "http://profile:1");
    assert.equal((await resolveAwsConfig({ "endpoint-url": "http://flag:6" }, await filesEnv(config, "", { AWS_ENDPOINT_URL_S3: "http://s3env:4" }))).endpointUrl, "http://flag:6");
  });

  it("ignore_configured_endpoint_urls drops env and config endpoints, not --endpoint-url; $AWS_IGNORE_… overrides the file", async () => {
    const config = "[default]\nignore_configured_endpoint_urls = true\nendpoint_url = http://profile:1\n";
    assert.equal((await resolveAwsConfig({}, await filesEnv(config, "", { AWS_ENDPOINT_URL: "http://env:5" }))).endpointUrl, undefined);
    assert.equal((await resolveAwsConfig({}, await filesEnv(config, "", { AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: "false" }))).endpointUrl, "http://profile:1");
    assert.equal((await resolveAwsConfig({ "endpoint-url": "http://flag:6" }, await filesEnv(config))).endpointUrl, "http://flag:6");
    await assert.rejects(resolveAwsConfig({}, await filesEnv("", "", { AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: "yes" })), /must be true or false, got "yes"/);
  });

  it("a named profile must exist in either file; the credentials file's values win", async () => {
    await assert.rejects(resolveAwsConfig({ profile: "nope" }, await filesEnv("[profile dev]\n")), (err: Error) => err instanceof UsageError && err.message === "The config profile (nope) could not be found");
    // As aws-cli, even "default" must exist once it is named.
    await assert.rejects(resolveAwsConfig({}, await filesEnv("", "", { AWS_PROFILE: "default" })), /The config profile \(default\) could not be found/);
    const onlyCredentials = await resolveAwsConfig({ profile: "ci" }, await filesEnv("[profile dev]\nregion = eu-west-3\n", "[ci]\nregion = us-west-2\n"));
    assert.deepEqual([onlyCredentials.profile, onlyCredentials.profileFromFlag, onlyCredentials.region], ["ci", true, "us-west-2"]);
    const both = await resolveAwsConfig({}, await filesEnv("[profile dev]\nregion = eu-west-3\n", "[dev]\nregion = us-west-2\n", { AWS_PROFILE: "dev" }));
    assert.deepEqual([both.profile, both.profileFromFlag, both.region], ["dev", false, "us-west-2"]);
  });

  it("a configured endpoint that is no http(s) URL is a usage error naming where it came from", async () => {
    await assert.rejects(resolveAwsConfig({ profile: "dev" }, await filesEnv("[profile dev]\nendpoint_url = localhost:9000\n")), /endpoint_url in profile dev: "localhost:9000" is not an http:\/\/ or https:\/\/ URL/);
  });
});
