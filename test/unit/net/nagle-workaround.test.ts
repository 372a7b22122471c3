import assert from "node:assert/strict";
import { needsFreshConnection } from "../../../src/net/nagle-workaround.js";

describe("net/nagle-workaround: which requests go out on a new connection (those answered with an XML document)", () => {
  it("listings, ListBuckets, multipart create/complete, copies and batch deletes do", () => {
    assert.equal(needsFreshConnection("GET", { "list-type": "2", prefix: "a/", "continuation-token": "t" }, {}), true); // ListObjectsV2
    assert.equal(needsFreshConnection("GET", { "x-id": "ListBuckets" }, {}), true);
    assert.equal(needsFreshConnection("GET", { uploads: "" }, {}), true); // ListMultipartUploads
    assert.equal(needsFreshConnection("GET", { uploadId: "u", "x-id": "ListParts" }, {}), true);
    assert.equal(needsFreshConnection("POST", { uploads: "", "x-id": "CreateMultipartUpload" }, {}), true);
    assert.equal(needsFreshConnection("POST", { uploadId: "u" }, {}), true); // CompleteMultipartUpload
    assert.equal(needsFreshConnection("POST", { delete: "" }, {}), true); // DeleteObjects
    assert.equal(needsFreshConnection("PUT", { "x-id": "CopyObject" }, { "x-amz-copy-source": "/b/k" }), true);
    assert.equal(needsFreshConnection("PUT", { partNumber: "2", uploadId: "u" }, { "X-Amz-Copy-Source": "/b/k" }), true); // UploadPartCopy
  });

  it("object data and empty answers do not", () => {
    assert.equal(needsFreshConnection("GET", undefined, { range: "bytes=0-9" }), false); // s3x's direct GET
    assert.equal(needsFreshConnection("GET", { "x-id": "GetObject" }, {}), false);
    assert.equal(needsFreshConnection("GET", { "x-id": "GetObject", partNumber: "1", versionId: "v", "response-content-type": "a/b" }, {}), false);
    assert.equal(needsFreshConnection("HEAD", { partNumber: "1" }, {}), false);
    assert.equal(needsFreshConnection("PUT", { "x-id": "PutObject" }, { "content-length": "5" }), false);
    assert.equal(needsFreshConnection("PUT", { partNumber: "1", uploadId: "u", "x-id": "UploadPart" }, {}), false);
    assert.equal(needsFreshConnection("DELETE", { uploadId: "u" }, {}), false); // AbortMultipartUpload: 204
    assert.equal(needsFreshConnection("DELETE", { "x-id": "DeleteObject" }, {}), false);
  });
});
