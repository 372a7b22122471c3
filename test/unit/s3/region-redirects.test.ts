import assert from "node:assert/strict";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { HttpResponse, type HttpRequest } from "@smithy/core/protocols";
import { Readable } from "node:stream";
import { directGet } from "../../../src/s3/request.js";
import { readAll } from "../../../src/s3/body.js";
import { learnBucketRoutes } from "../../../src/s3/bucket-routes.js";
import { bucketRegionsOf, followRegionRedirects, regionOfRedirect } from "../../../src/s3/region-redirects.js";

const scopeRegion = (request: HttpRequest) => /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/.exec(request.headers.authorization ?? "")?.[1];

/**
 * A client whose request handler plays S3 for buckets in other regions
 * (`homes`): a request signed for another region than its bucket's gets a
 * 400 AuthorizationHeaderMalformed naming it (or a 301 with the header);
 * others get 200. Only the network is stood in for.
 */
function regionalClient(homes: Map<string, string>, style: "400" | "301" = "400"): { client: S3Client; sent: HttpRequest[]; turnedAway: HttpRequest[] } {
  const sent: HttpRequest[] = [];
  const turnedAway: HttpRequest[] = [];
  const client = new S3Client({
    endpoint: "http://127.0.0.1:7480",
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    maxAttempts: 1,
    cacheMiddleware: true,
    requestHandler: {
      handle: async (request: HttpRequest) => {
        sent.push(request);
        // Answered later than sent, so concurrent commands overlap.
        await new Promise((resolve) => setImmediate(resolve));
        const home = homes.get(request.path.split("/")[1]);
        if (home !== undefined && scopeRegion(request) !== home) {
          turnedAway.push(request);
          if (style === "301") {
            const xml = "<Error><Code>PermanentRedirect</Code><Message>m</Message></Error>";
            return { response: new HttpResponse({ statusCode: 301, headers: { "x-amz-bucket-region": home, "content-type": "application/xml" }, body: Readable.from([Buffer.from(xml)]) }) };
          }
          const xml = `<Error><Code>AuthorizationHeaderMalformed</Code><Message>m</Message><Region>${home}</Region></Error>`;
          return { response: new HttpResponse({ statusCode: 400, headers: { "content-type": "application/xml" }, body: Readable.from([Buffer.from(xml)]) }) };
        }
        if (request.query["list-type"] !== undefined) {
          const xml = '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>';
          return { response: new HttpResponse({ statusCode: 200, headers: { "content-type": "application/xml" }, body: Readable.from([Buffer.from(xml)]) }) };
        }
        return { response: new HttpResponse({ statusCode: 200, headers: { etag: '"e"', "content-length": "2" }, body: Readable.from([Buffer.from("ok")]) }) };
      },
    },
  });
  followRegionRedirects(client);
  learnBucketRoutes(client, () => true);
  return { client, sent, turnedAway };
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

  it("signs concurrent SDK commands for two buckets of two regions each for its own bucket's region", async () => {
    const homes = new Map([["west", "eu-west-1"], ["south", "ap-south-1"]]);
    const { client, sent, turnedAway } = regionalClient(homes, "301");
    const lists = [];
    for (let i = 0; i < 8; i++) for (const bucket of homes.keys()) lists.push(client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `p${i}` })).catch((e: Error) => e));
    const results = await Promise.all(lists);
    assert.deepEqual(results.filter((r) => r instanceof Error), []);
    assert.equal(bucketRegionsOf(client)?.regionOf("west"), "eu-west-1");
    assert.equal(bucketRegionsOf(client)?.regionOf("south"), "ap-south-1");
    // After the first answers, every request goes out signed for its bucket's region at once.
    const before = turnedAway.length;
    await Promise.all([...homes.keys()].map((bucket) => client.send(new ListObjectsV2Command({ Bucket: bucket }))));
    assert.equal(turnedAway.length, before);
    for (const request of sent.slice(-2)) assert.equal(scopeRegion(request), homes.get(request.path.split("/")[1]));
  });

  it("a direct GET turned away for its region is signed again for the region named, and the region kept", async () => {
    const homes = new Map<string, string>();
    const { client, sent, turnedAway } = regionalClient(homes);
    await client.send(new GetObjectCommand({ Bucket: "moved", Key: "teach" }));
    // The bucket's region changes under a route already learnt (us-east-1).
    homes.set("moved", "sa-east-1");
    const first = await directGet(client, "moved", "a.bin", { range: "bytes=0-1" });
    assert.equal(first.statusCode, 200);
    assert.equal(turnedAway.length, 1);
    assert.equal(scopeRegion(sent.at(-1)!), "sa-east-1");
    const second = await directGet(client, "moved", "b.bin", {});
    assert.equal(second.statusCode, 200);
    assert.equal(turnedAway.length, 1, "no second redirect");
    // A 400 that is no redirect reaches the caller as it came, body and all.
    const config = client.config as unknown as { requestHandler: { handle: (r: HttpRequest) => Promise<{ response: HttpResponse }> } };
    config.requestHandler.handle = async () => ({
      response: new HttpResponse({ statusCode: 400, headers: {}, body: Readable.from([Buffer.from("<Error><Code>InvalidArgument</Code></Error>")]) }),
    });
    const refused = await directGet(client, "moved", "c.bin", {});
    assert.equal(refused.statusCode, 400);
    assert.match((await readAll(refused.body)).toString(), /InvalidArgument/);
  });
});
