import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createMultipartUpload, putObject, uploadPart } from "../../../src/s3/operations.js";
import { signsPayloadUnder } from "../../../src/s3/payload-signing.js";
import { recordingRequester } from "../../support/recording-client.js";

const HEX = /^[0-9a-f]{64}$/;
const body = Buffer.alloc(4096, 3);
const checksum = { algorithm: "CRC32C" as const, base64: "AAAAAA==" };
const ref = { bucket: "b", key: "k" };

describe("s3/payload-signing: which upload bodies are hashed into the signature (--payload-signing)", () => {
  it("the policy: auto hashes over plain HTTP only while no checked checksum rides along; always and never as said", () => {
    assert.equal(signsPayloadUnder("auto", "http:", false), true);
    assert.equal(signsPayloadUnder("auto", "http:", true), false);
    assert.equal(signsPayloadUnder("auto", "https:", false), false);
    assert.equal(signsPayloadUnder("always", "https:", true), true);
    assert.equal(signsPayloadUnder("never", "http:", false), false);
  });

  it("PutObject and UploadPart over plain HTTP: signed until the checksum is known checked, then UNSIGNED-PAYLOAD; always keeps the hash", async () => {
    for (const mode of ["auto", "always"] as const) {
      const { s3, sent } = recordingRequester("http://127.0.0.1:9", mode);
      const hashes = async (call: { checksumChecked?: boolean; checksum?: typeof checksum }): Promise<string[]> => {
        await putObject(s3, ref, body, {}, call);
        await uploadPart(s3, ref, "u", 1, body, call);
        return sent.slice(-2).map((r) => r.headers["x-amz-content-sha256"]);
      };
      for (const hash of await hashes({ checksum })) assert.match(hash, HEX, `${mode}: not yet known checked`);
      // "Checked" without a checksum on the request protects nothing: still hashed.
      for (const hash of await hashes({ checksumChecked: true })) assert.match(hash, HEX, `${mode}: no checksum sent`);
      const checked = await hashes({ checksum, checksumChecked: true });
      if (mode === "auto") assert.deepEqual(checked, ["UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD"]);
      else for (const hash of checked) assert.match(hash, HEX, `${mode}`);
      for (const request of sent.slice(-2)) assert.match(request.headers.authorization, /SignedHeaders=.*x-amz-checksum-crc32c;x-amz-content-sha256/);
    }
  });

  it("object data goes as UNSIGNED-PAYLOAD over TLS (still a signed header), hashed over plain HTTP", async () => {
    const tls = recordingRequester("https://s3.example.test", "auto");
    await putObject(tls.s3, ref, body, {});
    await uploadPart(tls.s3, ref, "u", 1, body);
    assert.deepEqual(tls.sent.map((r) => r.headers["x-amz-content-sha256"]), ["UNSIGNED-PAYLOAD", "UNSIGNED-PAYLOAD"]);
    assert.match(tls.sent[0].headers.authorization, /SignedHeaders=.*x-amz-content-sha256/);
    const plain = recordingRequester("http://127.0.0.1:9", "auto");
    await putObject(plain.s3, ref, body, {});
    assert.equal(plain.sent[0].headers["x-amz-content-sha256"], createHash("sha256").update(body).digest("hex"));
  });

  it("never: UNSIGNED-PAYLOAD over plain HTTP too; a request without data keeps its hash. always: hashed over TLS too", async () => {
    const never = recordingRequester("http://127.0.0.1:9", "never");
    await uploadPart(never.s3, ref, "u", 1, body);
    await createMultipartUpload(never.s3, ref, {}).catch(() => undefined); // the canned answer has no UploadId
    assert.equal(never.sent[0].headers["x-amz-content-sha256"], "UNSIGNED-PAYLOAD");
    assert.match(never.sent[1].headers["x-amz-content-sha256"], HEX);
    const always = recordingRequester("https://s3.example.test", "always");
    await putObject(always.s3, ref, body, {});
    assert.equal(always.sent[0].headers["x-amz-content-sha256"], createHash("sha256").update(body).digest("hex"));
  });
});
