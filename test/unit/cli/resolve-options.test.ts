import assert from "node:assert/strict";
import { applyOptionSources, originLabel } from "../../../src/cli/resolve-options.js";

describe("resolve-options: every option from the command line, the environment, the s3 = section, or its default (one step)", () => {
  it("maps each s3 = setting to its option, and a typed flag wins", () => {
    const args: Record<string, unknown> = { "multipart-threshold": "8MiB" };
    const settings = { max_concurrent_requests: "20", multipart_threshold: "64MB", multipart_chunksize: "16MB", addressing_style: "virtual", payload_signing_enabled: "true", use_accelerate_endpoint: "true" };
    const { origins, debugLines } = applyOptionSources(args, ["cp", "a", "s3://b/", "--part-size=32MiB"], {}, settings, "default");
    assert.deepEqual(args, { "multipart-threshold": "64MB", concurrency: 20, "force-path-style": false, "payload-signing": "always", "use-accelerate-endpoint": true });
    assert.deepEqual(origins.get("concurrency"), { from: "config", setting: "max_concurrent_requests", section: "[default] s3" });
    assert.deepEqual(origins.get("part-size"), { from: "command line" });
    assert.ok(debugLines.includes("multipart_chunksize in [default] s3: --part-size on the command line wins"), debugLines.join("\n"));
  });

  it("an option's environment variable wins over the config file and loses to the flag", () => {
    const fromEnv: Record<string, unknown> = {};
    const sources = applyOptionSources(fromEnv, [], { S3X_PAYLOAD_SIGNING: "never", AWS_CA_BUNDLE: "/etc/ca.pem", S3X_CHECKSUM_ALGORITHM: "SHA256" }, { payload_signing_enabled: "true" }, "default");
    assert.deepEqual(fromEnv, { "payload-signing": "never", "ca-bundle": "/etc/ca.pem", "checksum-algorithm": "SHA256" });
    assert.equal(originLabel("ca-bundle", sources.origins.get("ca-bundle")), "$AWS_CA_BUNDLE");
    assert.ok(sources.debugLines.includes("payload_signing_enabled in [default] s3: $S3X_PAYLOAD_SIGNING wins"));

    const flagged: Record<string, unknown> = { "payload-signing": "always", "ca-bundle": "/mine.pem" };
    const typed = applyOptionSources(flagged, ["ls", "--payload-signing", "always", "--ca-bundle=/mine.pem"], { S3X_PAYLOAD_SIGNING: "never", AWS_CA_BUNDLE: "/etc/ca.pem" }, {}, "default");
    assert.deepEqual(flagged, { "payload-signing": "always", "ca-bundle": "/mine.pem" });
    assert.equal(originLabel("ca-bundle", typed.origins.get("ca-bundle")), "--ca-bundle");
  });

  it("reads a typed alias or --no- form as the flag given", () => {
    const args: Record<string, unknown> = { quiet: true, "force-path-style": false };
    const { origins } = applyOptionSources(args, ["ls", "-rq", "--no-force-path-style"], {}, { addressing_style: "path" }, "default");
    assert.deepEqual(args, { quiet: true, "force-path-style": false });
    assert.equal(origins.get("quiet")?.from, "command line");
    assert.equal(origins.get("recursive")?.from, "command line");
    assert.equal(origins.get("force-path-style")?.from, "command line");
  });

  it("leaves the options whose sources depend on more than themselves to their own resolver", () => {
    // The profile decides endpoint and region (cli/aws-config.ts); $S3X_SHARD_COUNT counts only with --shard auto (plan/shard.ts).
    const args: Record<string, unknown> = {};
    const { origins } = applyOptionSources(args, [], { AWS_ENDPOINT_URL: "http://x:1", AWS_REGION: "eu-west-1", AWS_PROFILE: "ml", S3X_SHARD_COUNT: "4" }, {}, "default");
    assert.deepEqual(args, {});
    assert.equal(origins.has("endpoint-url"), false);
    assert.equal(origins.has("shard-count"), false);
  });

  it("auto and false leave s3x's defaults; unknown settings are ignored, and said so under --debug", () => {
    const args: Record<string, unknown> = {};
    const { debugLines } = applyOptionSources(args, [], {}, { addressing_style: "auto", payload_signing_enabled: "false", signature_version: "s3v4", max_queue_size: "1000" }, "ml");
    assert.deepEqual(args, {});
    assert.ok(debugLines.includes("signature_version in [profile ml] s3: not an s3 transfer setting s3x knows, ignored"), debugLines.join("\n"));
    assert.ok(debugLines.includes("max_queue_size in [profile ml] s3: accepted, no effect in s3x"), debugLines.join("\n"));
  });

  it("refuses values aws-cli refuses, naming the setting or the variable, even where a flag wins", () => {
    assert.throws(() => applyOptionSources({}, [], {}, { max_concurrent_requests: "0" }, "default"), /max_concurrent_requests in \[default\] s3: "0" is not a whole number/);
    assert.throws(() => applyOptionSources({}, ["--force-path-style"], {}, { addressing_style: "sideways" }, "default"), /not path, virtual or auto/);
  });
});
