import assert from "node:assert/strict";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { HttpResponse, type HttpRequest } from "@smithy/core/protocols";
import { Readable } from "node:stream";
import type { WireRequest } from "../../../src/net/transport.js";
import {
  abortMultipartUpload,
  completeMultipartUpload,
  copyObject,
  createMultipartUpload,
  getRange,
  headObject,
  listParts,
  putObject,
  uploadPart,
  uploadPartCopy,
} from "../../../src/s3/operations.js";
import { deleteObject, deleteObjects } from "../../../src/s3/delete.js";
import { listBuckets, listObjectsPage, listUploadsPage } from "../../../src/s3/list.js";
import { createBucket } from "../../../src/s3/buckets.js";
import { describeFailure, failureInOk } from "../../../src/s3/errors.js";
import { encodeKey } from "../../../src/s3/route.js";
import { recordingRequester, type CannedAnswer } from "../../support/recording-client.js";

const TRICKY_KEYS = ["plain.bin", "dir/sub dir/a b.txt", "ünïcødé/日本.bin", "a+b%20c&d=e?f#g", "!'()*~-_.", "x/../y", "trailing/"];

/**
 * The AWS SDK as the oracle of what each request looks like on the wire:
 * a client whose request handler records the request and answers `answer`.
 */
function sdkRecorder(endpoint: string | undefined, region: string, answer: CannedAnswer = { statusCode: 200, headers: { etag: '"e"' } }) {
  const sent: HttpRequest[] = [];
  const client = new S3Client({
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    region,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    maxAttempts: 1,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    requestHandler: {
      handle: async (request: HttpRequest) => {
        sent.push(request);
        return { response: new HttpResponse({ statusCode: answer.statusCode, headers: answer.headers ?? {}, body: Readable.from([Buffer.from(answer.body ?? "")]) }) };
      },
    },
  });
  return { client, sent };
}

/** Path and query of a wire request, the query as name → value. */
function split(request: WireRequest): { path: string; query: Record<string, string> } {
  const [path, query = ""] = request.path.split("?");
  const out: Record<string, string> = {};
  for (const pair of query.split("&").filter(Boolean)) {
    const [name, value = ""] = pair.split("=");
    out[decodeURIComponent(name)] = decodeURIComponent(value);
  }
  return { path, query: out };
}

/** Headers both sides send by rule, not by operation: left out of the comparison. */
const INCIDENTAL = /^(authorization|x-amz-date|amz-sdk-|x-amz-user-agent|user-agent|host|content-length|x-amz-checksum-mode|x-amz-content-sha256|x-amz-sdk-checksum-algorithm|x-amz-checksum-crc32|content-md5|expect)/i;
const comparable = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([n]) => !INCIDENTAL.test(n)).map(([n, v]) => [n.toLowerCase(), v]));

/** The SDK's query without its x-id marker. */
function sdkQuery(request: HttpRequest): Record<string, string> {
  const { "x-id": _xid, ...rest } = request.query as Record<string, string>;
  return Object.fromEntries(Object.entries(rest).map(([n, v]) => [n, v ?? ""]));
}

/** A document's elements without the declaration and whitespace between tags. */
const xmlShape = (xml: unknown) => String(xml ?? "").replace(/<\?xml[^>]*\?>/, "").replace(/>\s+</g, "><").trim();

function assertSameRequest(ours: WireRequest, sdk: HttpRequest, what: string): void {
  const { path, query } = split(ours);
  assert.equal(ours.method, sdk.method, `${what}: method`);
  assert.equal(ours.hostname, sdk.hostname, `${what}: host`);
  assert.equal(ours.port, sdk.port, `${what}: port`);
  assert.equal(path, sdk.path, `${what}: path`);
  assert.deepEqual(query, sdkQuery(sdk), `${what}: query`);
  assert.deepEqual(comparable(ours.headers), comparable(sdk.headers as Record<string, string>), `${what}: headers ${JSON.stringify(ours.headers)} vs ${JSON.stringify(sdk.headers)}`);
}

describe("s3/request: one request layer builds every operation's request as the SDK would, routes it, signs it and classifies its answer", () => {
  it("routes and encodes keys as the SDK does: path-style on a custom endpoint, virtual-hosted on AWS, path-style for names that are no host label", async () => {
    for (const [endpoint, bucket] of [
      ["http://127.0.0.1:7480", "bucket"],
      ["http://127.0.0.1:7480/base/path", "bucket"],
      [undefined, "bucket"],
      [undefined, "my.dotted.bucket"],
      [undefined, "Upper_Case"],
    ] as const) {
      const ours = recordingRequester(endpoint, "auto", () => ({ statusCode: 200 }), { endpoint: { region: "eu-west-3", endpointUrl: endpoint, forcePathStyle: endpoint !== undefined } });
      const sdk = sdkRecorder(endpoint, "eu-west-3");
      for (const key of TRICKY_KEYS) {
        await headObject(ours.s3, { bucket, key });
        await sdk.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        assertSameRequest(ours.sent.at(-1)!, sdk.sent.at(-1)!, `${endpoint ?? "AWS"} ${bucket} ${key}`);
        assert.ok(ours.sent.at(-1)!.path.endsWith(encodeKey(key)));
      }
    }
  });

  it("object requests (GET, HEAD, PUT, multipart create/part/complete/list/abort, copies, deletes, listings, buckets) carry the SDK's path, query and headers", async () => {
    const endpoint = "http://127.0.0.1:7480";
    const ref = { bucket: "bucket", key: "dir/big file+ü.bin" };
    const attrs = { contentType: "text/plain", storageClass: "STANDARD_IA", metadata: { mtime: "1700000000.000", MixedCase: "v" }, cacheControl: "no-cache", acl: "public-read", grants: { read: 'id="x"' } };
    const checksum = { algorithm: "CRC32C" as const, base64: "mnG7TA==" };
    const body = Buffer.from("hello");
    const source = { bucket: "src", key: "dir/a b+c.bin" };
    const cases: { what: string; ours: (s3: ReturnType<typeof recordingRequester>["s3"]) => Promise<unknown>; sdk: (c: S3Client) => Promise<unknown> }[] = [
      {
        what: "GetObject (range, if-match)",
        ours: (s3) => getRange(s3, { ref, start: 0, end: 1, ifMatch: '"e"', target: Buffer.alloc(2), offset: 0 }).catch(() => undefined),
        sdk: (c) => c.send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key, Range: "bytes=0-1", IfMatch: '"e"' })),
      },
      { what: "HeadObject partNumber", ours: (s3) => headObject(s3, ref, { partNumber: 2 }), sdk: (c) => c.send(new HeadObjectCommand({ Bucket: ref.bucket, Key: ref.key, PartNumber: 2 })) },
      {
        what: "PutObject",
        ours: (s3) => putObject(s3, ref, body, attrs, { checksum }),
        sdk: (c) => c.send(new PutObjectCommand({ Bucket: ref.bucket, Key: ref.key, Body: body, ContentLength: body.length, ContentType: attrs.contentType, StorageClass: "STANDARD_IA", Metadata: attrs.metadata, CacheControl: attrs.cacheControl, ACL: "public-read", GrantRead: 'id="x"', ChecksumCRC32C: checksum.base64 })),
      },
      {
        what: "CreateMultipartUpload",
        ours: (s3) => createMultipartUpload(s3, ref, attrs, { checksum: { algorithm: "CRC32C", type: "FULL_OBJECT" } }).catch(() => undefined),
        sdk: (c) => c.send(new CreateMultipartUploadCommand({ Bucket: ref.bucket, Key: ref.key, ContentType: attrs.contentType, StorageClass: "STANDARD_IA", Metadata: attrs.metadata, CacheControl: attrs.cacheControl, ACL: "public-read", GrantRead: 'id="x"', ChecksumAlgorithm: "CRC32C", ChecksumType: "FULL_OBJECT" })).catch(() => undefined),
      },
      {
        what: "UploadPart",
        ours: (s3) => uploadPart(s3, ref, "up/id+1", 3, body, { checksum }),
        sdk: (c) => c.send(new UploadPartCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: "up/id+1", PartNumber: 3, Body: body, ContentLength: body.length, ChecksumCRC32C: checksum.base64 })),
      },
      {
        what: "CompleteMultipartUpload",
        ours: (s3) => completeMultipartUpload(s3, ref, "u", [{ partNumber: 2, etag: '"b"', checksum }, { partNumber: 1, etag: '"a"', checksum }]).catch(() => undefined),
        sdk: (c) =>
          c.send(new CompleteMultipartUploadCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: "u", MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"a"', ChecksumCRC32C: checksum.base64 }, { PartNumber: 2, ETag: '"b"', ChecksumCRC32C: checksum.base64 }] } })).catch(() => undefined),
      },
      { what: "ListParts", ours: (s3) => listParts(s3, ref, "u").catch(() => undefined), sdk: (c) => c.send(new ListPartsCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: "u" })).catch(() => undefined) },
      { what: "AbortMultipartUpload", ours: (s3) => abortMultipartUpload(s3, ref, "u"), sdk: (c) => c.send(new AbortMultipartUploadCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: "u" })) },
      {
        what: "CopyObject",
        ours: (s3) => copyObject(s3, source, ref, attrs, '"etag"').catch(() => undefined),
        sdk: (c) => c.send(new CopyObjectCommand({ Bucket: ref.bucket, Key: ref.key, CopySource: "src/dir/a%20b%2Bc.bin", CopySourceIfMatch: '"etag"', MetadataDirective: "REPLACE", ContentType: attrs.contentType, StorageClass: "STANDARD_IA", Metadata: attrs.metadata, CacheControl: attrs.cacheControl, ACL: "public-read", GrantRead: 'id="x"' })).catch(() => undefined),
      },
      {
        what: "UploadPartCopy",
        ours: (s3) => uploadPartCopy(s3, source, ref, "u", 4, { start: 0, end: 9 }, '"etag"').catch(() => undefined),
        sdk: (c) => c.send(new UploadPartCopyCommand({ Bucket: ref.bucket, Key: ref.key, UploadId: "u", PartNumber: 4, CopySource: "src/dir/a%20b%2Bc.bin", CopySourceRange: "bytes=0-9", CopySourceIfMatch: '"etag"' })).catch(() => undefined),
      },
      { what: "DeleteObject", ours: (s3) => deleteObject(s3, ref.bucket, ref.key), sdk: (c) => c.send(new DeleteObjectCommand({ Bucket: ref.bucket, Key: ref.key })) },
      {
        what: "DeleteObjects",
        ours: (s3) => deleteObjects(s3, ref.bucket, ["a & b", "ü/<k>"]).catch(() => undefined),
        sdk: (c) => c.send(new DeleteObjectsCommand({ Bucket: ref.bucket, Delete: { Objects: [{ Key: "a & b" }, { Key: "ü/<k>" }], Quiet: true } })).catch(() => undefined),
      },
      {
        what: "ListObjectsV2",
        ours: (s3) => listObjectsPage(s3, "bucket", "p/ü", { delimiter: "/", token: "t+/=", startAfter: "p/a", maxKeys: 10 }).catch(() => undefined),
        sdk: (c) => c.send(new ListObjectsV2Command({ Bucket: "bucket", Prefix: "p/ü", Delimiter: "/", ContinuationToken: "t+/=", StartAfter: "p/a", MaxKeys: 10 })).catch(() => undefined),
      },
      {
        what: "ListMultipartUploads",
        ours: (s3) => listUploadsPage(s3, "bucket", "p/", { key: "k", uploadId: "u" }).catch(() => undefined),
        sdk: (c) => c.send(new ListMultipartUploadsCommand({ Bucket: "bucket", Prefix: "p/", KeyMarker: "k", UploadIdMarker: "u" })).catch(() => undefined),
      },
      { what: "ListBuckets", ours: (s3) => listBuckets(s3).catch(() => undefined), sdk: (c) => c.send(new ListBucketsCommand({})).catch(() => undefined) },
      {
        what: "CreateBucket (a region other than us-east-1)",
        ours: (s3) => createBucket(s3, "newbucket"),
        sdk: (c) => c.send(new CreateBucketCommand({ Bucket: "newbucket", CreateBucketConfiguration: { LocationConstraint: "eu-west-3" } })),
      },
    ];
    for (const c of cases) {
      const ours = recordingRequester(endpoint, "auto", () => ({ statusCode: 200, headers: { etag: '"e"' } }), { endpoint: { region: "eu-west-3", endpointUrl: endpoint, forcePathStyle: true } });
      const sdk = sdkRecorder(endpoint, "eu-west-3");
      await c.ours(ours.s3);
      await c.sdk(sdk.client);
      assert.equal(ours.sent.length, 1, c.what);
      assertSameRequest(ours.sent[0], sdk.sent[0], c.what);
      if (c.what.startsWith("Complete") || c.what.startsWith("DeleteObjects") || c.what.startsWith("CreateBucket")) {
        assert.equal(xmlShape(ours.sent[0].body ? Buffer.from(ours.sent[0].body).toString() : ""), xmlShape(sdk.sent[0].body), `${c.what}: body`);
      }
      // Signed with the bucket's scope, host and payload hash covered.
      const authorization = /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-3\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(ours.sent[0].headers.authorization);
      assert.ok(authorization, c.what);
      // Every header the operation chose is signed (cache-control never is: the library's rule, as SigV4's reference).
      for (const name of ["host", "x-amz-content-sha256", "x-amz-date", ...Object.keys(comparable(ours.sent[0].headers)).filter((n) => n !== "cache-control")]) assert.ok(authorization[1].split(";").includes(name), `${c.what}: ${name} signed`);
    }
  });

  it("DeleteObjects carries Content-MD5 of its document, which every S3 server accepts", async () => {
    const ours = recordingRequester("http://127.0.0.1:7480", "auto", () => ({ statusCode: 200, body: "<DeleteResult><Error><Key>k</Key><Code>AccessDenied</Code><Message>no</Message></Error></DeleteResult>" }));
    const failures = await deleteObjects(ours.s3, "b", ["k", "j"]);
    assert.deepEqual(failures, [{ key: "k", code: "AccessDenied", message: "no" }]);
    const sent = ours.sent[0];
    const { createHash } = await import("node:crypto");
    assert.equal(sent.headers["content-md5"], createHash("md5").update(sent.body!).digest("base64"));
  });

  it("hands the caller's signal and the attempt's routing to the transport; a hedged attempt's own signal wins", async () => {
    const ours = recordingRequester("http://127.0.0.1:7480");
    const caller = new AbortController();
    const routing = { avoid: new Set(["10.0.0.1"]) };
    await headObject(ours.s3, { bucket: "b", key: "k" }, { signal: caller.signal, routing });
    assert.equal(ours.options[0]?.signal, caller.signal);
    assert.equal(ours.options[0]?.routing, routing);
    const own = new AbortController();
    await headObject(ours.s3, { bucket: "b", key: "k" }, { signal: caller.signal, routing: { avoid: new Set(), signal: own.signal } });
    assert.equal(ours.options[1]?.signal, own.signal);
  });

  it("a request for another bucket's key never reuses a route: anonymous requests go unsigned", async () => {
    const anonymous = recordingRequester("http://127.0.0.1:7480", "auto", undefined, { credentials: undefined });
    await headObject(anonymous.s3, { bucket: "public", key: "k" });
    assert.equal(anonymous.sent[0].headers.authorization, undefined);
    assert.equal(anonymous.sent[0].path, "/public/k");
  });

  it("turns a non-2xx answer into the error it stands for (name, Code, HTTP status); a clock skew is corrected once from the server's Date", async () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`;
    const refusing = recordingRequester("http://127.0.0.1:7480", "auto", () => ({ statusCode: 412, headers: { "x-amz-request-id": "r" }, body: xml }));
    const err = (await headObject(refusing.s3, { bucket: "b", key: "k" }).catch((e: unknown) => e)) as Error & { Code?: string; $metadata: { httpStatusCode: number } };
    assert.equal(err.name, "PreconditionFailed");
    assert.equal(err.Code, "PreconditionFailed");
    assert.equal(err.$metadata.httpStatusCode, 412);
    const bare = recordingRequester("http://127.0.0.1:7480", "auto", () => ({ statusCode: 503 }));
    assert.equal(describeFailure(await headObject(bare.s3, { bucket: "b", key: "k" }).catch((e: unknown) => e)).code, "SlowDown");
    // A server whose clock is an hour ahead: refused once, then signed with its time.
    const serverNow = () => new Date(Date.now() + 3_600_000);
    let refusals = 0;
    const skewed = recordingRequester("http://127.0.0.1:7480", "auto", (request) => {
      const signedAt = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(request.headers["x-amz-date"])!;
      const at = Date.UTC(+signedAt[1], +signedAt[2] - 1, +signedAt[3], +signedAt[4], +signedAt[5], +signedAt[6]);
      if (Math.abs(at - serverNow().getTime()) > 15 * 60_000) {
        refusals++;
        return { statusCode: 403, headers: { date: serverNow().toUTCString() }, body: "<Error><Code>RequestTimeTooSkewed</Code><Message>skewed</Message></Error>" };
      }
      return { statusCode: 200 };
    });
    await headObject(skewed.s3, { bucket: "b", key: "k" });
    await headObject(skewed.s3, { bucket: "b", key: "k" });
    assert.equal(refusals, 1);
  });

  it("a CompleteMultipartUpload or copy that answers 200 can still have failed: an <Error> body is the server's word, a transient one a 503", () => {
    const result = `<?xml version="1.0" encoding="UTF-8"?><CopyObjectResult><ETag>"e"</ETag><LastModified>2026-11-24T00:00:00.000Z</LastModified></CopyObjectResult>`;
    assert.equal(failureInOk({ headers: {} }, result, "CopyObject", true), undefined);
    const late = failureInOk({ headers: { "x-amz-request-id": "r" } }, `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>\n`, "CopyObject") as Error & { $fault: string; $metadata: { httpStatusCode: number; requestId?: string } };
    assert.equal(late.name, "InternalError");
    assert.equal(late.$fault, "server");
    assert.equal(late.$metadata.httpStatusCode, 503);
    assert.equal(late.$metadata.requestId, "r");
    const cut = failureInOk({ headers: {} }, "", "CopyObject", true) as Error & { $metadata: { httpStatusCode: number } };
    assert.equal(cut.$metadata.httpStatusCode, 503);
    assert.equal(failureInOk({ headers: {} }, "", "CompleteMultipartUpload"), undefined);
    const final = failureInOk({ headers: {} }, "<Error><Code>InvalidPart</Code><Message>m</Message></Error>", "CompleteMultipartUpload") as Error & { $metadata: { httpStatusCode: number } };
    assert.equal(final.name, "InvalidPart");
    assert.equal(final.$metadata.httpStatusCode, 200);
  });
});
