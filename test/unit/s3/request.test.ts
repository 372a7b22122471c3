import assert from "node:assert/strict";
import { CopyObjectCommand, CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from "@aws-sdk/client-s3";
import { HttpResponse, type HttpRequest } from "@smithy/core/protocols";
import { Readable } from "node:stream";
import { copyFailure, directGet, directPut, errorOf } from "../../../src/s3/request.js";
import { canSendDirectly, encodeKey, learnBucketRoutes, routeOf } from "../../../src/s3/bucket-routes.js";
import { copyObject, putObject, uploadPart } from "../../../src/s3/operations.js";

const TRICKY_KEYS = ["plain.bin", "dir/sub dir/a b.txt", "ünïcødé/日本.bin", "a+b%20c&d=e?f#g", "!'()*~-_.", "x/../y", "trailing/"];

/**
 * A client whose request handler records every request and answers 200
 * with a short body: it stands in for the network only; the SDK's request
 * building and signing run for real.
 */
function recordingClient(endpoint: string, forcePathStyle: boolean, signsPayload = true): { client: S3Client; sent: HttpRequest[] } {
  const sent: HttpRequest[] = [];
  const client = new S3Client({
    endpoint,
    region: "eu-west-3",
    forcePathStyle,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: HttpRequest) => {
        sent.push(request);
        return { response: new HttpResponse({ statusCode: 200, headers: { etag: '"e"', "content-length": "2" }, body: Readable.from([Buffer.from("ok")]) }) };
      },
    },
  });
  learnBucketRoutes(client, () => signsPayload);
  return { client, sent };
}

describe("s3/request: GETs and PUTs without the SDK's middleware, once the SDK has shown the way", () => {
  it("encodes keys in paths exactly as the SDK does (every tricky key teaches a route)", async () => {
    for (const [endpoint, pathStyle, base] of [
      ["http://127.0.0.1:7480", true, "/bucket/"],
      ["https://s3.eu-west-3.amazonaws.com", false, "/"],
    ] as const) {
      const { client, sent } = recordingClient(endpoint, pathStyle);
      for (const key of TRICKY_KEYS) {
        await client.send(new GetObjectCommand({ Bucket: "bucket", Key: key }));
        const request = sent.at(-1)!;
        assert.equal(request.path, base + encodeKey(key), `${endpoint} ${key}`);
        const route = routeOf(request, key);
        assert.equal(route?.base, base);
        assert.equal(route?.signingRegion, "eu-west-3");
      }
    }
  });

  it("learns a bucket's route from the SDK's first GET, then signs and sends the next GETs itself", async () => {
    const { client, sent } = recordingClient("http://127.0.0.1:7480", true);
    assert.equal(canSendDirectly(client, "bucket"), false);
    await client.send(new GetObjectCommand({ Bucket: "bucket", Key: "first" }));
    assert.equal(canSendDirectly(client, "bucket"), true);
    assert.equal(canSendDirectly(client, "other"), false);
    const response = await directGet(client, "bucket", "dir/a b+c.bin", { range: "bytes=0-1", "if-match": '"e"' });
    assert.equal(response.statusCode, 200);
    const direct = sent.at(-1)!;
    const viaSdk = sent[0];
    assert.equal(direct.path, "/bucket/dir/a%20b%2Bc.bin");
    assert.equal(direct.hostname, viaSdk.hostname);
    assert.equal(direct.port, viaSdk.port);
    assert.equal(direct.headers.range, "bytes=0-1");
    // Signed (s3/sigv4) with the same scope, covering the headers that matter.
    assert.match(direct.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-3\/s3\/aws4_request, SignedHeaders=host;if-match;range;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
    assert.equal(direct.headers.host, "127.0.0.1:7480");
  });

  it("a direct PUT carries the headers the SDK writes for the same input, and a payload hash unless --payload-signing says otherwise", async () => {
    const attrs = { contentType: "text/plain", storageClass: "STANDARD_IA", metadata: { mtime: "1700000000.000", MixedCase: "v" } };
    const body = Buffer.from("hello");
    const checksum = { algorithm: "CRC32C" as const, base64: "mnG7TA==" };
    const { client, sent } = recordingClient("http://127.0.0.1:7480", true);
    await client.send(new GetObjectCommand({ Bucket: "bucket", Key: "teach" }));
    const viaSdk = recordingClient("http://127.0.0.1:7480", true);
    await viaSdk.client.send(new PutObjectCommand({ Bucket: "bucket", Key: "k e y", Body: body, ContentLength: body.length, ContentType: attrs.contentType, StorageClass: "STANDARD_IA", Metadata: attrs.metadata, ChecksumCRC32C: checksum.base64 }));
    assert.equal(await putObject(client, { bucket: "bucket", key: "k e y" }, body, attrs, { checksum }), '"e"');
    const direct = sent.at(-1)!;
    const sdk = viaSdk.sent[0];
    const comparable = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([n]) => !/^(authorization|x-amz-date|amz-sdk-|x-amz-user-agent|user-agent)/.test(n)));
    assert.deepEqual(comparable(direct.headers), comparable(sdk.headers));
    assert.equal(direct.path, sdk.path);
    assert.equal(direct.body, body);
    const unsigned = recordingClient("http://127.0.0.1:7480", true, false);
    await unsigned.client.send(new GetObjectCommand({ Bucket: "bucket", Key: "teach" }));
    await directPut(unsigned.client, "bucket", "k", {}, body);
    assert.equal(unsigned.sent.at(-1)!.headers["x-amz-content-sha256"], "UNSIGNED-PAYLOAD");
  });

  it("a direct UploadPart carries the path, query and headers the SDK writes for the same part", async () => {
    const body = Buffer.from("part bytes");
    const checksum = { algorithm: "CRC32C" as const, base64: "mnG7TA==" };
    const ref = { bucket: "bucket", key: "big file.bin" };
    const { client, sent } = recordingClient("http://127.0.0.1:7480", true);
    // CreateMultipartUpload is on the object's path too: it teaches the route.
    // (The stand-in answer is no XML, so the SDK then fails to parse it: the route is learnt before.)
    await client.send(new CreateMultipartUploadCommand({ Bucket: "bucket", Key: "first" })).catch(() => undefined);
    assert.equal(canSendDirectly(client, "bucket"), true);
    const viaSdk = recordingClient("http://127.0.0.1:7480", true);
    await viaSdk.client.send(new UploadPartCommand({ Bucket: "bucket", Key: ref.key, UploadId: "up/id+1", PartNumber: 3, Body: body, ContentLength: body.length, ChecksumCRC32C: checksum.base64 }));
    assert.equal(await uploadPart(client, ref, "up/id+1", 3, body, { checksum }), '"e"');
    const direct = sent.at(-1)!;
    const sdk = viaSdk.sent[0];
    const comparable = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([n]) => !/^(authorization|x-amz-date|amz-sdk-|x-amz-user-agent|user-agent)/.test(n)));
    assert.deepEqual(comparable(direct.headers), comparable(sdk.headers));
    assert.equal(direct.path, sdk.path);
    const { "x-id": _xid, ...sdkQuery } = sdk.query as Record<string, string>;
    assert.deepEqual(direct.query, sdkQuery);
    assert.match(direct.headers.authorization, /SignedHeaders=content-length;content-type;host;x-amz-checksum-crc32c;x-amz-content-sha256;x-amz-date, /);
  });

  it("learns nothing from a request whose path it would not reproduce, or that another signer signed", () => {
    const signed = { protocol: "http:", hostname: "h", port: 80, headers: { authorization: "AWS4-HMAC-SHA256 Credential=A/20261122/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0" } };
    assert.equal(routeOf({ ...signed, path: "/b/a%2Fb" }, "a/b"), undefined, "a key encoded differently");
    assert.ok(routeOf({ ...signed, path: "/b/a/b" }, "a/b"));
    assert.equal(routeOf({ ...signed, path: "/b/k", headers: { authorization: "AWS4-ECDSA-P256-SHA256 Credential=A/20261122/s3/aws4_request" } }, "k"), undefined, "SigV4a");
    assert.equal(routeOf({ ...signed, path: "/b/k", headers: { ...signed.headers, "x-amz-s3session-token": "t" } }, "k"), undefined, "S3 Express");
  });

  it("a direct CopyObject carries the path and headers the SDK writes for the same copy, learnt from the SDK's first CopyObject", async () => {
    const source = { bucket: "src", key: "dir/a b+c.bin" };
    const dest = { bucket: "bucket", key: "copy/ü.bin" };
    const { client, sent } = recordingClient("http://127.0.0.1:7480", true);
    // The stand-in answer is no XML: the SDK fails to parse it, after the route is learnt.
    await client.send(new CopyObjectCommand({ Bucket: "bucket", Key: "first", CopySource: "src/first" })).catch(() => undefined);
    assert.equal(canSendDirectly(client, "bucket"), true);
    for (const attrs of [undefined, { contentType: "text/plain", storageClass: "STANDARD_IA", metadata: { mtime: "1700000000.000", MixedCase: "v" } }]) {
      const viaSdk = recordingClient("http://127.0.0.1:7480", true);
      await viaSdk.client
        .send(new CopyObjectCommand({ Bucket: dest.bucket, Key: dest.key, CopySource: "src/dir/a%20b%2Bc.bin", CopySourceIfMatch: '"etag"', MetadataDirective: attrs ? "REPLACE" : "COPY", ContentType: attrs?.contentType, StorageClass: attrs?.storageClass as "STANDARD_IA" | undefined, Metadata: attrs?.metadata }))
        .catch(() => undefined);
      await copyObject(client, source, dest, attrs, '"etag"');
      const direct = sent.at(-1)!;
      const sdk = viaSdk.sent[0];
      const comparable = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([n]) => !/^(authorization|x-amz-date|amz-sdk-|x-amz-user-agent|user-agent|content-length)/.test(n)));
      assert.deepEqual(comparable(direct.headers), comparable(sdk.headers));
      assert.equal(direct.path, sdk.path);
      assert.equal(direct.method, "PUT");
      assert.equal(direct.headers["content-length"], "0");
    }
  });

  it("a CopyObject that answers 200 can still have failed: an <Error> body or no body at all is a server error", () => {
    const result = `<?xml version="1.0" encoding="UTF-8"?><CopyObjectResult><ETag>"e"</ETag><LastModified>2026-11-24T00:00:00.000Z</LastModified></CopyObjectResult>`;
    assert.equal(copyFailure(200, {}, result), undefined);
    const late = copyFailure(200, { "x-amz-request-id": "r" }, `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>\n`) as Error & { Code?: string; $fault: string; $metadata: { httpStatusCode: number; requestId?: string } };
    assert.equal(late.name, "InternalError");
    assert.equal(late.$fault, "server");
    assert.equal(late.$metadata.httpStatusCode, 503);
    assert.equal(late.$metadata.requestId, "r");
    const cut = copyFailure(200, {}, "") as Error & { $metadata: { httpStatusCode: number } };
    assert.equal(cut.name, "InternalError");
    assert.equal(cut.$metadata.httpStatusCode, 503);
    const refused = copyFailure(412, {}, "<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>") as Error & { $metadata: { httpStatusCode: number } };
    assert.equal(refused.name, "PreconditionFailed");
    assert.equal(refused.$metadata.httpStatusCode, 412);
  });

  it("turns an error answer into an SDK-shaped error (name, Code, HTTP status) and reads its body", async () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`;
    const err = (await errorOf({ statusCode: 412, headers: { "x-amz-request-id": "r" }, body: Readable.from([Buffer.from(xml)]) })) as Error & { Code?: string; $metadata: { httpStatusCode: number } };
    assert.equal(err.name, "PreconditionFailed");
    assert.equal(err.Code, "PreconditionFailed");
    assert.equal(err.$metadata.httpStatusCode, 412);
    const bare = (await errorOf({ statusCode: 503, headers: {}, body: Readable.from([]) })) as Error & { $fault: string };
    assert.equal(bare.name, "Unknown");
    assert.equal(bare.$fault, "server");
  });
});
