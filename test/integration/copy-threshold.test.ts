/** --copy-threshold above S3's CopyObject limit: one usage error for cp and cp -r (issue #38). */
import assert from "node:assert/strict";
import { runS3x } from "../support/cli.js";
import { freshBucket, objectExists, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

describe("--copy-threshold above 5GiB is a usage error in both forms (real radosgw)", () => {
  let s3: TestS3;
  let bucket: string;
  const s3x = (args: string[]) => runS3x([...args, "--endpoint-url", s3.endpoint], { env: s3.env });

  before(async function () {
    this.timeout(120_000);
    s3 = await testS3();
    bucket = await freshBucket(s3, "copythr");
    await putTestObject(s3, bucket, "src/a.txt", Buffer.from("a\n"));
  });

  for (const [form, args] of [
    ["cp", (b: string) => ["cp", `s3://${b}/src/a.txt`, `s3://${b}/dst/a.txt`]],
    ["cp --recursive", (b: string) => ["cp", "--recursive", `s3://${b}/src/`, `s3://${b}/dst/`]],
    // Checked once per run before anything is planned: a dry run is refused the same way.
    ["cp --dryrun", (b: string) => ["cp", "--dryrun", `s3://${b}/src/a.txt`, `s3://${b}/dst/a.txt`]],
  ] as const) {
    it(`${form}: exit 2, one line, nothing copied`, async () => {
      const res = await s3x([...args(bucket), "--copy-threshold", "6GiB"]);
      assert.equal(res.code, 2, res.stderr);
      assert.match(res.stderr, /^s3x: .*--copy-threshold cannot exceed 5GiB \(S3's CopyObject limit\)\n$/);
      assert.equal(await objectExists(s3, bucket, "dst/a.txt"), false);
    });
  }
});
