import assert from "node:assert/strict";
import { answersWithDocument } from "../../../src/net/document-answers.js";

describe("net/document-answers: which requests get an XML document back", () => {
  it("listings, ListBuckets, multipart create/complete, copies and batch deletes do", () => {
    assert.equal(answersWithDocument("GET", { "list-type": "2", prefix: "a/", "continuation-token": "t" }, {}), true); // ListObjectsV2
    assert.equal(answersWithDocument("GET", { "x-id": "ListBuckets" }, {}), true);
    assert.equal(answersWithDocument("GET", { uploads: "" }, {}), true); // ListMultipartUploads
    assert.equal(answersWithDocument("GET", { uploadId: "u", "x-id": "ListParts" }, {}), true);
    assert.equal(answersWithDocument("POST", { uploads: "", "x-id": "CreateMultipartUpload" }, {}), true);
    assert.equal(answersWithDocument("POST", { uploadId: "u" }, {}), true); // CompleteMultipartUpload
    assert.equal(answersWithDocument("POST", { delete: "" }, {}), true); // DeleteObjects
    assert.equal(answersWithDocument("PUT", { "x-id": "CopyObject" }, { "x-amz-copy-source": "/b/k" }), true);
    assert.equal(answersWithDocument("PUT", { partNumber: "2", uploadId: "u" }, { "X-Amz-Copy-Source": "/b/k" }), true); // UploadPartCopy
  });

  it("object data and empty answers do not", () => {
    assert.equal(answersWithDocument("GET", undefined, { range: "bytes=0-9" }), false); // s3x's direct GET
    assert.equal(answersWithDocument("GET", { "x-id": "GetObject" }, {}), false);
    assert.equal(answersWithDocument("GET", { "x-id": "GetObject", partNumber: "1", versionId: "v", "response-content-type": "a/b" }, {}), false);
    assert.equal(answersWithDocument("HEAD", { partNumber: "1" }, {}), false);
    assert.equal(answersWithDocument("PUT", { "x-id": "PutObject" }, { "content-length": "5" }), false);
    assert.equal(answersWithDocument("PUT", { partNumber: "1", uploadId: "u", "x-id": "UploadPart" }, {}), false);
    assert.equal(answersWithDocument("DELETE", { uploadId: "u" }, {}), false); // AbortMultipartUpload: 204
    assert.equal(answersWithDocument("DELETE", { "x-id": "DeleteObject" }, {}), false);
  });
});
