import assert from "node:assert/strict";
import { CreateMultipartUploadCommand, PutObjectCommand, UploadPartCommand } from "@aws-sdk/client-s3";
import { createHash } from "node:crypto";
import { recordingClient } from "../../support/recording-client.js";


describe("s3/client payload signing", () => {
  const body = Buffer.alloc(1024, 7);

  it("sends object data as UNSIGNED-PAYLOAD over TLS", async () => {
    const { client, sent } = recordingClient("https://s3.example.test", "auto");
    await client.send(new PutObjectCommand({ Bucket: "b", Key: "k", Body: body }));
    await client.send(new UploadPartCommand({ Bucket: "b", Key: "k", UploadId: "u", PartNumber: 1, Body: body }));
    assert.equal(sent[0].headers["x-amz-content-sha256"], "UNSIGNED-PAYLOAD");
    assert.equal(sent[1].headers["x-amz-content-sha256"], "UNSIGNED-PAYLOAD");
    assert.match(sent[0].headers.authorization, /SignedHeaders=.*x-amz-content-sha256/);
  });

  it("keeps the payload signed over plain HTTP", async () => {
    const { client, sent } = recordingClient("http://127.0.0.1:9", "auto");
    await client.send(new PutObjectCommand({ Bucket: "b", Key: "k", Body: body }));
    assert.match(sent[0].headers["x-amz-content-sha256"], /^[0-9a-f]{64}$/);
  });

  it("--payload-signing never: UNSIGNED-PAYLOAD over plain HTTP too, still a signed header; other requests keep their hash", async () => {
    const { client, sent } = recordingClient("http://127.0.0.1:9", "never");
    await client.send(new UploadPartCommand({ Bucket: "b", Key: "k", UploadId: "u", PartNumber: 1, Body: body }));
    await client.send(new CreateMultipartUploadCommand({ Bucket: "b", Key: "k" }));
    assert.equal(sent[0].headers["x-amz-content-sha256"], "UNSIGNED-PAYLOAD");
    assert.match(sent[0].headers.authorization, /SignedHeaders=.*x-amz-content-sha256/);
    assert.match(sent[1].headers["x-amz-content-sha256"], /^[0-9a-f]{64}$/);
  });

  it("--payload-signing always: the payload is hashed over TLS too", async () => {
    const { client, sent } = recordingClient("https://s3.example.test", "always");
    await client.send(new PutObjectCommand({ Bucket: "b", Key: "k", Body: body }));
    assert.equal(sent[0].headers["x-amz-content-sha256"], createHash("sha256").update(body).digest("hex"));
  });
});
