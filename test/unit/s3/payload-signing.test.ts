import assert from "node:assert/strict";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { putObject, uploadPart } from "../../../src/s3/operations.js";
import { signsPayloadUnder } from "../../../src/s3/payload-signing.js";
import { recordingClient } from "../../support/recording-client.js";

const HEX = /^[0-9a-f]{64}$/;
const body = Buffer.alloc(4096, 3);
const checksum = { algorithm: "CRC32C" as const, base64: "AAAAAA==" };
const ref = { bucket: "b", key: "k" };

describe("s3/payload-signing: a checksum the server verifies replaces the SHA-256 under auto", () => {
  it("the policy: auto hashes over plain HTTP only while no checked checksum rides along; always and never as said", () => {
    assert.equal(signsPayloadUnder("auto", "http:", false), true);
    assert.equal(signsPayloadUnder("auto", "http:", true), false);
    assert.equal(signsPayloadUnder("auto", "https:", false), false);
    assert.equal(signsPayloadUnder("always", "https:", true), true);
    assert.equal(signsPayloadUnder("never", "http:", false), false);
  });

  for (const path of ["SDK", "direct"] as const) {
    it(`${path} PutObject and UploadPart over plain HTTP: signed until the checksum is known checked, then UNSIGNED-PAYLOAD; always keeps the hash`, async () => {
      for (const mode of ["auto", "always"] as const) {
        const { client, sent } = recordingClient("http://127.0.0.1:9", mode, path === "direct");
        if (path === "direct") await client.send(new GetObjectCommand({ Bucket: "b", Key: "teach" }));
        const hashes = async (call: { checksumChecked?: boolean; checksum?: typeof checksum }): Promise<string[]> => {
          await putObject(client, ref, body, {}, call);
          await uploadPart(client, ref, "u", 1, body, call);
          return sent.slice(-2).map((r) => r.headers["x-amz-content-sha256"]!);
        };
        for (const hash of await hashes({ checksum })) assert.match(hash, HEX, `${path} ${mode}: not yet known checked`);
        // "Checked" without a checksum on the request protects nothing: still hashed.
        for (const hash of await hashes({ checksumChecked: true })) assert.match(hash, HEX, `${path} ${mode}: no checksum sent`);
        const checked = await hashes({ checksum, checksumChecked: true });
        if (mode === "auto") assert.deepEqual(checked, ["UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD"], path);
        else for (const hash of checked) assert.match(hash, HEX, `${path} always`);
        // The SDK's requests carry its amz-sdk-* headers; direct ones do not.
        for (const request of sent.slice(-2)) assert.equal("amz-sdk-invocation-id" in request.headers, path === "SDK");
        for (const request of sent.slice(-2)) assert.match(request.headers.authorization!, /SignedHeaders=.*x-amz-checksum-crc32c;x-amz-content-sha256/);
      }
    });
  }
});
