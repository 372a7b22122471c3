import assert from "node:assert/strict";
import { ListObjectsV2Command, S3Client, type ListObjectsV2CommandOutput } from "@aws-sdk/client-s3";
import { HttpResponse } from "@smithy/core/protocols";
import { Readable } from "node:stream";
import { parseListObjectsV2, readListingsDirectly } from "../../../src/s3/list-xml.js";

/**
 * A client whose request handler answers every request with `xml` (status
 * `status`): it stands in for the network only; the SDK's serializers,
 * signing and (without s3x's reader) parsers run for real, so s3x's reader
 * can be compared with the SDK's on the same bytes.
 */
function clientAnswering(xml: string, direct: boolean, status = 200): S3Client {
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
  if (direct) readListingsDirectly(client);
  return client;
}

/** The fields s3x reads from a listing. */
function essentials(out: ListObjectsV2CommandOutput) {
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

describe("s3/list-xml: ListObjectsV2 answers read without the SDK's XML parser", () => {
  it("reads a page exactly as the SDK does: keys with entities, unicode and control characters, sizes above 4 GiB, prefixes, the token", async () => {
    const command = () => new ListObjectsV2Command({ Bucket: "bucket", Prefix: "data/", Delimiter: "/" });
    const sdk = await clientAnswering(PAGE, false).send(command());
    const direct = await clientAnswering(PAGE, true).send(command());
    assert.deepEqual(essentials(direct), essentials(sdk));
    assert.equal(direct.Contents?.[0].Key, `data/a & b <c> "d" 'e'.bin`);
    assert.equal(direct.Contents?.[2].Size, 5368709120);
    assert.equal(direct.$metadata.httpStatusCode, 200);
  });

  it("reads the last page and an empty listing as the SDK does", async () => {
    const last = `<ListBucketResult><Name>b</Name><Prefix></Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated><Contents><Key>k</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag><Size>1</Size></Contents></ListBucketResult>`;
    const empty = `<?xml version="1.0"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix/><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`;
    for (const xml of [last, empty]) {
      const sdk = await clientAnswering(xml, false).send(new ListObjectsV2Command({ Bucket: "b" }));
      const direct = await clientAnswering(xml, true).send(new ListObjectsV2Command({ Bucket: "b" }));
      assert.deepEqual(essentials(direct), essentials(sdk));
    }
  });

  it("leaves error answers and documents it does not know to the SDK's parser", async () => {
    const error = `<?xml version="1.0"?><Error><Code>NoSuchBucket</Code><Message>gone</Message></Error>`;
    await assert.rejects(clientAnswering(error, true, 404).send(new ListObjectsV2Command({ Bucket: "b" })), (err: Error) => err.name === "NoSuchBucket");
    assert.equal(parseListObjectsV2(error), undefined);
    // CDATA, or a Contents block without a Key: not for this reader.
    assert.equal(parseListObjectsV2(`<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key><![CDATA[k]]></Key></Contents></ListBucketResult>`), undefined);
    assert.equal(parseListObjectsV2(`<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Size>1</Size></Contents></ListBucketResult>`), undefined);
    const odd = `<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key><![CDATA[odd]]></Key><Size>1</Size></Contents></ListBucketResult>`;
    const viaSdk = await clientAnswering(odd, true).send(new ListObjectsV2Command({ Bucket: "b" }));
    assert.equal(viaSdk.Contents?.[0].Key, "odd");
  });

  it("leaves unusual but valid spellings to the SDK's parser, which reads every key (never a page read as empty)", async () => {
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
      const viaSdk = await clientAnswering(xml, false).send(new ListObjectsV2Command({ Bucket: "b" }));
      const direct = await clientAnswering(xml, true).send(new ListObjectsV2Command({ Bucket: "b" }));
      assert.deepEqual(essentials(direct), essentials(viaSdk), xml);
      assert.equal(direct.Contents?.length, 2, xml);
    }
  });

  it("leaves a page whose KeyCount disagrees with the keys it read to the SDK's parser", () => {
    const xml = `<ListBucketResult><KeyCount>3</KeyCount><IsTruncated>false</IsTruncated><Contents><Key>a</Key></Contents><CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes></ListBucketResult>`;
    assert.equal(parseListObjectsV2(xml), undefined);
    assert.equal(parseListObjectsV2(xml.replace("<KeyCount>3", "<KeyCount>2"))?.Contents?.length, 1, "keys and prefixes both count");
  });
});

