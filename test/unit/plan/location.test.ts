import assert from "node:assert/strict";
import { destinationKey, parseLocation, UsageError } from "../../../src/plan/location.js";

describe("plan/location", () => {
  it("reads s3 URLs with keys taken verbatim", () => {
    assert.deepEqual(parseLocation("s3://bucket/a/b c+%é.txt"), { kind: "s3", bucket: "bucket", key: "a/b c+%é.txt" });
    assert.deepEqual(parseLocation("s3://bucket"), { kind: "s3", bucket: "bucket", key: "" });
    assert.deepEqual(parseLocation("s3://bucket/"), { kind: "s3", bucket: "bucket", key: "" });
  });

  it("reads - as a stream and anything else as a local path", () => {
    assert.deepEqual(parseLocation("-"), { kind: "stream" });
    assert.deepEqual(parseLocation("./data/x"), { kind: "local", path: "./data/x" });
  });

  it("refuses malformed s3 URLs with a message naming the argument", () => {
    assert.throws(() => parseLocation("s3://"), (e: Error) => e instanceof UsageError && /malformed S3 URL "s3:\/\/"/.test(e.message));
    assert.throws(() => parseLocation("s3:/bucket/key"), /malformed S3 URL/);
    assert.throws(() => parseLocation("s3://bu cket/key"), /not a valid bucket name/);
  });

  it("appends the file name to a bucket or a prefix ending in /", () => {
    assert.equal(destinationKey("", "f.bin"), "f.bin");
    assert.equal(destinationKey("dir/", "f.bin"), "dir/f.bin");
    assert.equal(destinationKey("dir/name", "f.bin"), "dir/name");
  });
});
