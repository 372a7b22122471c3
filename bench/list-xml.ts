/**
 * What reading a listing costs the client: CPU per 1,000 listed keys for
 * s3x's ListObjectsV2 reader (s3/list-xml.ts), for the library it falls back
 * to (fast-xml-parser, s3/xml.ts), and for a whole SDK ListObjectsV2 call
 * (request building and signing included; the network is a stand-in that
 * returns the document), on the same answer.
 *
 *   npm run bench:list-xml [-- --pages 50]
 */
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { HttpResponse } from "@smithy/core/protocols";
import { Readable } from "node:stream";
import { listingThroughLibrary, parseListObjectsV2 } from "../src/s3/list-xml.js";
import { arg } from "./common.js";

const pages = arg("pages", 50);
const contents = Array.from(
  { length: 1000 },
  (_, i) =>
    `<Contents><Key>datasets/v1/shard-${String(i).padStart(5, "0")}.tar</Key><LastModified>2026-11-22T10:00:00.000Z</LastModified>` +
    `<ETag>&quot;${"0".repeat(32)}&quot;</ETag><Size>65536</Size><StorageClass>STANDARD</StorageClass><Owner><ID>o</ID><DisplayName>o</DisplayName></Owner></Contents>`,
);
const page = Buffer.from(
  `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>datasets/v1/</Prefix>` +
    `<KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>t</NextContinuationToken>${contents.join("")}</ListBucketResult>`,
);

function sdkClient(): S3Client {
  return new S3Client({
    endpoint: "http://127.0.0.1:9",
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    requestHandler: { handle: async () => ({ response: new HttpResponse({ statusCode: 200, headers: {}, body: Readable.from([page]) }) }) },
  });
}

const READERS: Record<string, () => Promise<unknown>> = {
  "SDK call (parser included)": (() => {
    const c = sdkClient();
    return () => c.send(new ListObjectsV2Command({ Bucket: "b" }));
  })(),
  "fast-xml-parser (s3x's fallback)": async () => listingThroughLibrary(page.toString("utf8")),
  "s3x reader": async () => parseListObjectsV2(page.toString("utf8")),
};

async function cpuPerThousandKeys(read: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5; i++) await read(); // warm-up
  const start = process.cpuUsage();
  for (let i = 0; i < pages; i++) await read();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / pages;
}

const rows: [string, number][] = [];
for (let round = 0; round < 3; round++) {
  for (const [name, read] of Object.entries(READERS)) rows.push([name, await cpuPerThousandKeys(read)]);
}
const median = (name: string) => rows.filter(([n]) => n === name).map(([, v]) => v).sort((a, b) => a - b)[1];
console.log(`| reader | CPU ms per page of 1,000 keys (median of 3 × ${pages} pages) |\n|---|---|`);
for (const name of Object.keys(READERS)) console.log(`| ${name} | ${median(name).toFixed(1)} |`);
