import assert from "node:assert/strict";
import { applyS3Settings } from "../../../src/cli/s3-config.js";

describe("applyS3Settings: aws-cli's s3 section onto s3x's options", () => {
  it("maps each setting to its option, and a typed flag or s3x's variable wins", () => {
    const args: Record<string, unknown> = { "multipart-threshold": "8MiB" };
    const settings = { max_concurrent_requests: "20", multipart_threshold: "64MB", multipart_chunksize: "16MB", addressing_style: "virtual", payload_signing_enabled: "true", use_accelerate_endpoint: "true" };
    applyS3Settings(args, settings, ["cp", "a", "s3://b/", "--part-size=32MiB"], "default", {});
    assert.deepEqual(args, { "multipart-threshold": "64MB", concurrency: 20, "force-path-style": false, "payload-signing": "always", "use-accelerate-endpoint": true });
    const withEnv: Record<string, unknown> = {};
    applyS3Settings(withEnv, { payload_signing_enabled: "true" }, [], "default", { S3X_PAYLOAD_SIGNING: "never" });
    assert.deepEqual(withEnv, {});
  });

  it("auto and false leave s3x's defaults; unknown settings are ignored", () => {
    const args: Record<string, unknown> = {};
    const lines = applyS3Settings(args, { addressing_style: "auto", payload_signing_enabled: "false", signature_version: "s3v4" }, [], "ml", {});
    assert.deepEqual(args, {});
    assert.ok(lines.some((line) => line.startsWith("signature_version in [profile ml] s3: not an s3 transfer setting")));
  });

  it("refuses values aws-cli refuses, naming the setting", () => {
    assert.throws(() => applyS3Settings({}, { max_concurrent_requests: "0" }, [], "default", {}), /max_concurrent_requests in \[default\] s3: "0" is not a whole number/);
    assert.throws(() => applyS3Settings({}, { addressing_style: "sideways" }, [], "default", {}), /not path, virtual or auto/);
  });
});
