import assert from "node:assert/strict";
import { copyAttributesOf, objectAttributesOf, type AttributeArgs } from "../../../src/cli/options.js";
import { transferSizesOf } from "../../../src/cli/commands/transfer-options.js";

/** Options given as text, parsed once per run and handed down typed (issue #38), not once per file. */
describe("options parsed once per run", () => {
  /** Args whose --metadata and --sse count how often they are read. */
  function countingArgs(given: AttributeArgs): { args: AttributeArgs; reads: Record<string, number> } {
    const reads: Record<string, number> = {};
    const args = new Proxy(given, {
      get(target, name: string) {
        if (name === "metadata" || name === "sse") reads[name] = (reads[name] ?? 0) + 1;
        return target[name as keyof AttributeArgs];
      },
    });
    return { args, reads };
  }

  it("reads --metadata and --sse once however many files are uploaded, each file adding its mtime", async () => {
    const { args, reads } = countingArgs({ metadata: "team=ml", sse: "AES256" });
    const attributesFor = objectAttributesOf(args);
    const first = await attributesFor("f1.txt", 1000);
    const afterOne = { ...reads };
    const files = [first, ...(await Promise.all([2, 3].map((n) => attributesFor(`f${n}.txt`, n * 1000))))];
    assert.equal(reads.metadata, 1);
    assert.deepEqual(reads, afterOne, "the second and third files read no option again");
    assert.deepEqual(files.map((a) => a.metadata), [1, 2, 3].map((n) => ({ team: "ml", mtime: `${n}.000` })));
    assert.deepEqual(files.map((a) => [a.contentType, a.sse]), [1, 2, 3].map(() => ["text/plain", "AES256"]));
    // Each object gets its own metadata: one file's cannot leak into another's.
    assert.notEqual(files[0].metadata, files[1].metadata);
  });

  it("reads them once for every S3→S3 copy too, and not at all before the first object is written", async () => {
    const { args, reads } = countingArgs({ metadata: "team=ml", sse: "AES256", "metadata-directive": "REPLACE" });
    const copyFor = copyAttributesOf(args);
    const beforeAny = reads.metadata ?? 0;
    for (const key of ["a", "b", "c"]) await copyFor(key);
    assert.equal(beforeAny, 0);
    assert.equal(reads.metadata, 1);
  });

  it("a bad --metadata is one usage error, at the first object", async () => {
    const attributesFor = objectAttributesOf({ metadata: "no-equals-sign" });
    await assert.rejects(attributesFor("a.txt"), /--metadata expects key=value/);
  });

  it("parses --part-size and --multipart-threshold into numbers, checked against S3's limits", () => {
    assert.deepEqual(transferSizesOf({ "part-size": "16MiB", "multipart-threshold": "8MiB" }, { kind: "s3", bucket: "b", key: "k" }), { partSize: 16 * 2 ** 20, multipartThreshold: 8 * 2 ** 20 });
    assert.deepEqual(transferSizesOf({ "multipart-threshold": "8MiB" }, { kind: "local", path: "x" }), { partSize: undefined, multipartThreshold: 8 * 2 ** 20 });
    assert.throws(() => transferSizesOf({ "multipart-threshold": "6GiB" }, { kind: "local", path: "x" }), /--multipart-threshold cannot exceed 5GiB/);
    assert.throws(() => transferSizesOf({ "part-size": "1KiB", "multipart-threshold": "8MiB" }, { kind: "s3", bucket: "b", key: "k" }));
  });
});
