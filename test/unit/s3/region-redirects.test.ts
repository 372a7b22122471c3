import assert from "node:assert/strict";
import type { WireRequest } from "../../../src/net/transport.js";
import { regionOfRedirect } from "../../../src/s3/region-redirects.js";
import { getRange, headObject } from "../../../src/s3/operations.js";
import { listObjectsPage } from "../../../src/s3/list.js";
import { describeFailure } from "../../../src/s3/errors.js";
import { recordingRequester, type CannedAnswer } from "../../support/recording-client.js";

const scopeRegion = (request: WireRequest) => /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/.exec(request.headers.authorization ?? "")?.[1];
const bucketOf = (request: WireRequest) => request.path.split(/[/?]/)[1];

/**
 * Plays S3 for buckets in other regions (`homes`): a request signed for
 * another region than its bucket's gets a 400 AuthorizationHeaderMalformed
 * naming it (or a 301 with the x-amz-bucket-region header); others get 200.
 * Only the network is stood in for.
 */
function regional(homes: Map<string, string>, style: "400" | "301" = "400", aws = false) {
  const endpoint = aws ? undefined : "http://127.0.0.1:7480";
  const turnedAway: WireRequest[] = [];
  const answer = (request: WireRequest): CannedAnswer => {
    const bucket = endpoint === undefined ? request.hostname.split(".")[0] : bucketOf(request);
    const home = homes.get(bucket);
    if (home !== undefined && scopeRegion(request) !== home) {
      turnedAway.push(request);
      if (style === "301") return { statusCode: 301, headers: { "x-amz-bucket-region": home }, body: "<Error><Code>PermanentRedirect</Code><Message>m</Message></Error>" };
      return { statusCode: 400, body: `<Error><Code>AuthorizationHeaderMalformed</Code><Message>m</Message><Region>${home}</Region></Error>` };
    }
    if (request.path.includes("list-type=2")) return { statusCode: 200, body: '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>' };
    return { statusCode: 206, headers: { etag: '"e"', "content-length": "2", "content-range": "bytes 0-1/2" }, body: "ok" };
  };
  return { ...recordingRequester(endpoint, "auto", answer), turnedAway };
}

describe("s3/region-redirects: a bucket in another region is learnt once, and its requests signed for it", () => {
  it("tells a region redirect from other errors, as botocore does", () => {
    assert.equal(regionOfRedirect(301, "PermanentRedirect", "eu-west-1", undefined, false), "eu-west-1");
    assert.equal(regionOfRedirect(400, "AuthorizationHeaderMalformed", undefined, "ap-south-1", false), "ap-south-1");
    assert.equal(regionOfRedirect(400, "400", "ap-south-1", undefined, true), "ap-south-1", "a HEAD's bodiless 400");
    assert.equal(regionOfRedirect(400, "InvalidArgument", "ap-south-1", undefined, false), undefined, "any other 400");
    assert.equal(regionOfRedirect(403, "AccessDenied", "ap-south-1", undefined, false), undefined);
    assert.equal(regionOfRedirect(301, "PermanentRedirect", undefined, undefined, false), undefined, "no region named");
  });

  it("concurrent listings of two buckets in two regions: one redirect per bucket, then every request signed for its bucket's region", async () => {
    const homes = new Map([["west", "eu-west-1"], ["south", "ap-south-1"]]);
    const { s3, sent, turnedAway } = regional(homes, "301");
    const lists = [];
    for (let i = 0; i < 8; i++) for (const bucket of homes.keys()) lists.push(listObjectsPage(s3, bucket, `p${i}`, {}).catch((e: Error) => e));
    const results = await Promise.all(lists);
    assert.deepEqual(results.filter((r) => r instanceof Error), []);
    assert.equal(turnedAway.length, 2, "the first request to each bucket went alone");
    assert.equal(s3.regions.regionOf("west"), "eu-west-1");
    assert.equal(s3.regions.regionOf("south"), "ap-south-1");
    for (const request of sent.filter((r) => !turnedAway.includes(r))) assert.equal(scopeRegion(request), homes.get(bucketOf(request)));
  });

  it("a GET turned away for its region (400 naming it) is signed again for that region, and the region kept", async () => {
    const homes = new Map([["moved", "sa-east-1"]]);
    const { s3, sent, turnedAway } = regional(homes);
    const target = Buffer.alloc(2);
    const first = await getRange(s3, { ref: { bucket: "moved", key: "a.bin" }, start: 0, end: 1, target, offset: 0 });
    assert.equal(first.bytes, 2);
    assert.equal(turnedAway.length, 1);
    assert.equal(scopeRegion(sent.at(-1)!), "sa-east-1");
    await getRange(s3, { ref: { bucket: "moved", key: "b.bin" }, start: 0, end: 1, target, offset: 0 });
    assert.equal(turnedAway.length, 1, "no second redirect");
  });

  it("on AWS the redirected request goes to the bucket's regional host, not just a new signature", async () => {
    const homes = new Map([["bucket", "eu-central-1"]]);
    const { s3, sent } = regional(homes, "301", true);
    await headObject(s3, { bucket: "bucket", key: "k" }).catch(() => undefined);
    assert.deepEqual(sent.map((r) => r.hostname), ["bucket.s3.us-east-1.amazonaws.com", "bucket.s3.eu-central-1.amazonaws.com"]);
  });

  it("a 400 that is no redirect reaches the caller as the error it is; a redirect to the region already used is not followed", async () => {
    const { s3 } = recordingRequester("http://127.0.0.1:7480", "auto", () => ({ statusCode: 400, body: "<Error><Code>InvalidArgument</Code><Message>no</Message></Error>" }));
    const err = await headObject(s3, { bucket: "b", key: "k" }).catch((e: unknown) => e);
    assert.equal(describeFailure(err).code, "InvalidArgument");
    assert.equal(describeFailure(err).status, 400);
    const loop = recordingRequester("http://127.0.0.1:7480", "auto", () => ({ statusCode: 301, headers: { "x-amz-bucket-region": "us-east-1" } }));
    const same = await headObject(loop.s3, { bucket: "b", key: "k" }).catch((e: unknown) => e);
    assert.equal(describeFailure(same).status, 301);
    assert.equal(loop.sent.length, 1);
  });
});
