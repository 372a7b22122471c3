import assert from "node:assert/strict";
import { ListObjectsV2Command, S3Client, type ListObjectsV2CommandOutput } from "@aws-sdk/client-s3";
import { HttpResponse } from "@smithy/core/protocols";
import { Readable } from "node:stream";
import { parseListObjectsV2, readListing, type ListObjectsV2Fields } from "../../../src/s3/list-xml.js";

/**
 * The AWS SDK as the oracle: a client whose request handler answers every
 * request with `xml` (status `status`), so its own parser reads the same
 * bytes as s3x's readers (the fast one, and the library behind it).
 */
function sdkAnswering(xml: string, status = 200): S3Client {
  const client = new S3Client({
    endpoint: "http://127.0.0.1:9",
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    maxAttempts: 1,
    requestHandler: {
      handle: async () => ({
        response: new HttpResponse({ statusCode: status, headers: { "x-amz-request-id": "req-1", "content-type": "application/xml" }, body: Readable.from([Buffer.from(xml)]) }),
      }),
    },
  });
  return client;
}

/** What s3x reads of `xml` (undefined: not a listing). */
function ours(xml: string): ListObjectsV2Fields {
  const out = readListing(xml);
  assert.ok(out, "s3x reads a listing");
  return out;
}

/** The fields s3x reads from a listing. */
function essentials(out: ListObjectsV2CommandOutput | ListObjectsV2Fields) {
  return {
    IsTruncated: out.IsTruncated,
    NextContinuationToken: out.NextContinuationToken,
    KeyCount: out.KeyCount,
    Name: out.Name,
    Prefix: out.Prefix,
    Contents: out.Contents?.map((o) => ({ Key: o.Key, Size: o.Size, ETag: o.ETag, LastModified: o.LastModified?.toISOString(), StorageClass: o.StorageClass })),
    CommonPrefixes: out.CommonPrefixes?.map((p) => ({ Prefix: p.Prefix })),
  };
}

const PAGE = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><Prefix>data/</Prefix><KeyCount>4</KeyCount><MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
<Contents><Key>data/a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;.bin</Key><LastModified>2026-11-22T10:00:01.123Z</LastModified><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>65536</Size><StorageClass>STANDARD</StorageClass><Owner><ID>owner</ID><DisplayName>Owner</DisplayName></Owner><Type>Normal</Type></Contents>
<Contents><Key>data/ünïcødé +%20 日本.txt</Key><LastModified>2026-11-22T10:00:02.000Z</LastModified><ETag>"abc-3"</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>data/control&#x1;&#9;char</Key><LastModified>2026-11-22T10:00:03.000Z</LastModified><ETag>&#34;e&#34;</ETag><Size>5368709120</Size><StorageClass>GLACIER</StorageClass></Contents>
<CommonPrefixes><Prefix>data/sub/</Prefix></CommonPrefixes><CommonPrefixes><Prefix>data/x&amp;y/</Prefix></CommonPrefixes>
</ListBucketResult>`;

describe("s3/list-xml: ListObjectsV2 answers read by s3x's own reader, and by the library when it is unusual, as the SDK reads them", () => {
  it("reads a page exactly as the SDK does: keys with entities, unicode and control characters, sizes above 4 GiB, prefixes, the token", async () => {
    const command = () => new ListObjectsV2Command({ Bucket: "bucket", Prefix: "data/", Delimiter: "/" });
    const sdk = await sdkAnswering(PAGE).send(command());
    const direct = ours(PAGE);
    assert.deepEqual(essentials(direct), essentials(sdk));
    assert.equal(direct.Contents?.[0].Key, `data/a & b <c> "d" 'e'.bin`);
    assert.equal(direct.Contents?.[2].Size, 5368709120);
  });

  it("reads the last page and an empty listing as the SDK does", async () => {
    const last = `<ListBucketResult><Name>b</Name><Prefix></Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated><Contents><Key>k</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag><Size>1</Size></Contents></ListBucketResult>`;
    const empty = `<?xml version="1.0"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix/><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`;
    for (const xml of [last, empty]) {
      const sdk = await sdkAnswering(xml).send(new ListObjectsV2Command({ Bucket: "b" }));
      assert.deepEqual(essentials(ours(xml)), essentials(sdk));
    }
  });

  it("leaves documents it does not know to the library; an error document is no listing", async () => {
    const error = `<?xml version="1.0"?><Error><Code>NoSuchBucket</Code><Message>gone</Message></Error>`;
    assert.equal(parseListObjectsV2(error), undefined);
    assert.equal(readListing(error), undefined);
    // CDATA, or a Contents block without a Key: not for this reader.
    assert.equal(parseListObjectsV2(`<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key><![CDATA[k]]></Key></Contents></ListBucketResult>`), undefined);
    assert.equal(parseListObjectsV2(`<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Size>1</Size></Contents></ListBucketResult>`), undefined);
    const odd = `<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key><![CDATA[odd]]></Key><Size>1</Size></Contents></ListBucketResult>`;
    assert.equal(ours(odd).Contents?.[0].Key, "odd");
  });

  it("leaves unusual but valid spellings to the library, which reads every key as the SDK does (never a page read as empty)", async () => {
    const page = (contents: string, keyCount = "2") =>
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix><KeyCount>${keyCount}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`;
    const entry = (open: string, key: string) => `${open}<Key>${key}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag><Size>1</Size></Contents>`;
    const unusual = [
      page(entry('<Contents xmlns="">', "a") + entry('<Contents xmlns="">', "b")),
      page(entry("<Contents >", "a") + entry("<Contents\n>", "b")),
      page(entry("<Contents>", "a") + entry("<Contents>", '<![CDATA[b]]>')),
      page(entry("<Contents>", "a") + entry("<Contents>", "b<!-- note -->")),
      page(entry("<Contents>", "a") + entry("<Contents>", "b").replace("<Key>", '<Key xml:space="preserve">')),
      page(entry("<Contents>", "a") + entry("<Contents>", "b").replace("</Key>", "</Key >")),
      page(entry("<Contents>", "a&#13;") + entry("<Contents>", "b")).replace("<Name>", "\r\n<Name>"),
    ];
    for (const xml of unusual) {
      assert.equal(parseListObjectsV2(xml), undefined, xml);
      const viaSdk = await sdkAnswering(xml).send(new ListObjectsV2Command({ Bucket: "b" }));
      const direct = ours(xml);
      assert.deepEqual(essentials(direct), essentials(viaSdk), xml);
      assert.equal(direct.Contents?.length, 2, xml);
    }
  });

  it("leaves a page whose KeyCount disagrees with the keys it read to the library", () => {
    const xml = `<ListBucketResult><KeyCount>3</KeyCount><IsTruncated>false</IsTruncated><Contents><Key>a</Key></Contents><CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes></ListBucketResult>`;
    assert.equal(parseListObjectsV2(xml), undefined);
    assert.equal(parseListObjectsV2(xml.replace("<KeyCount>3", "<KeyCount>2"))?.Contents?.length, 1, "keys and prefixes both count");
  });
});

