import assert from "node:assert/strict";
import { UsageError } from "../../../src/plan/location.js";
import { ManifestError, manifestForm, parseManifest, refuseCollisions, type ManifestEntry, type ManifestOptions } from "../../../src/plan/manifest.js";
import { assertGoodSplit, seededRandom } from "../../support/shard-checks.js";

const named = { name: "manifest.txt" };
const based = (bucket: string, prefix: string): ManifestOptions => ({ name: "manifest.txt", base: { bucket, prefix } });
const short = (entries: ManifestEntry[]) => entries.map((e) => `${e.bucket}|${e.key}|${e.relativePath}|${e.line}`);

/** Asserts parseManifest throws a ManifestError with exactly this message (or matching it: V8's own JSON messages vary by version). */
function refuses(text: string, options: ManifestOptions, message: string | RegExp): void {
  assert.throws(
    () => parseManifest(text, options),
    (err: unknown) => {
      assert.ok(err instanceof ManifestError, `a ManifestError, got ${String(err)}`);
      assert.ok(err instanceof UsageError, "reported as a usage error");
      if (typeof message === "string") assert.equal(err.message, message);
      else assert.match(err.message, message);
      assert.ok(!err.message.includes("\n"), "one line");
      return true;
    },
  );
}

describe("plan/manifest: lists", () => {
  it("reads s3:// URLs, one per line, skipping blank lines and # comments, trimming, CRLF or LF", () => {
    const text = "# training set v3\r\n\r\ns3://b/data/a.bin\r\n   s3://b/data/sub/b.bin  \r\n\t\n# done\ns3://other/c d.bin\n";
    assert.deepEqual(short(parseManifest(text, named)), ["b|data/a.bin|data/a.bin|3", "b|data/sub/b.bin|data/sub/b.bin|4", "other|c d.bin|c d.bin|7"]);
  });

  it("takes a lone CR as a line break, not as part of a key", () => {
    assert.deepEqual(short(parseManifest("s3://b/a\rs3://b/b\r", named)), ["b|a|a|1", "b|b|b|2"]);
  });

  it("takes keys verbatim: no URL decoding", () => {
    assert.deepEqual(short(parseManifest("s3://b/a%20b+c.bin\ns3://b/ünï/😀\n", named)), ["b|a%20b+c.bin|a%20b+c.bin|1", "b|ünï/😀|ünï/😀|2"]);
  });

  it("reads bare keys relative to the base, URLs relative to the base prefix", () => {
    const text = "img/0001.jpg\ns3://b/train/img/0002.jpg\n";
    assert.deepEqual(short(parseManifest(text, based("b", "train/"))), ["b|train/img/0001.jpg|img/0001.jpg|1", "b|train/img/0002.jpg|img/0002.jpg|2"]);
    // A base prefix without "/" is a directory, as a recursive source is.
    assert.deepEqual(short(parseManifest(text, based("b", "train"))), short(parseManifest(text, based("b", "train/"))));
    assert.deepEqual(short(parseManifest("x/y.bin\n", based("b", ""))), ["b|x/y.bin|x/y.bin|1"]);
  });

  it("refuses a bare key without a base", () => {
    refuses("s3://b/a\n\n img/1.jpg\n", named, 'manifest.txt:3: "img/1.jpg": a key needs a base s3:// URL (or write s3://bucket/img/1.jpg)');
  });

  it("refuses URLs outside the base: another bucket, or not under the prefix", () => {
    refuses("s3://b/train/a\ns3://c/train/b\n", based("b", "train/"), 'manifest.txt:2: s3://c/train/b is in bucket "c", not in the base s3://b/train/');
    refuses("s3://b/train/a\n#\ns3://b/trainX/b\n", based("b", "train"), "manifest.txt:3: s3://b/trainX/b is not under the base s3://b/train/");
  });

  it("refuses what is not an object URL, with its line", () => {
    refuses("s3://b/a\nhttps://example.com/x\n", named, 'manifest.txt:2: "https://example.com/x" is not an s3:// URL');
    refuses("s3://b/a\ns3://b/\n", named, "manifest.txt:2: s3://b/ names no object (empty key)");
    refuses("s3://b\n", named, "manifest.txt:1: s3://b names no object (empty key)");
    refuses("s3://b/a\ns3://b/dir/\n", named, 'manifest.txt:2: s3://b/dir/ ends with "/": a folder, not an object');
    refuses("dir/\n", based("b", "p"), 'manifest.txt:1: s3://b/p/dir/ ends with "/": a folder, not an object');
    refuses("s3:///key\n", named, 'manifest.txt:1: malformed S3 URL "s3:///key": expected s3://bucket/key');
    refuses("\n\ns3://bad bucket/key\n", named, 'manifest.txt:3: malformed S3 URL "s3://bad bucket/key": "bad bucket" is not a valid bucket name');
  });

  it("refuses a manifest that lists nothing", () => {
    refuses("", named, "manifest.txt: no objects listed");
    refuses("# only a comment\r\n\r\n", { name: "stdin" }, "stdin: no objects listed");
  });

  it("ignores a byte-order mark", () => {
    assert.deepEqual(short(parseManifest("\uFEFFs3://b/a\n", named)), ["b|a|a|1"]);
    assert.equal(manifestForm("\uFEFF  [ ]"), "sagemaker");
  });

  it("parses 10,000 lines quickly, and keeps their order", () => {
    const text = Array.from({ length: 10_000 }, (_, i) => `s3://bucket/train/${String(i).padStart(5, "0")}.tar`).join("\n");
    const started = process.hrtime.bigint();
    const entries = parseManifest(text, named);
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    assert.equal(entries.length, 10_000);
    assert.deepEqual(entries.map((e) => e.line), Array.from({ length: 10_000 }, (_, i) => i + 1));
    assert.equal(entries[9_999].key, "train/09999.tar");
    // Generous for two loaded cores; it takes a few milliseconds.
    assert.ok(elapsedMs < 2000, `${elapsedMs} ms`);
  });
});

describe("plan/manifest: SageMaker manifests", () => {
  const sm = { name: "train.manifest" };

  it("reads the prefix and the relative keys, each with its line", () => {
    const text = '[\n  {"prefix": "s3://b/some/prefix/"},\n  "relative/path/custdata-1",\n  "custdata-2"\n]\n';
    assert.equal(manifestForm(text), "sagemaker");
    assert.deepEqual(short(parseManifest(text, sm)), ["b|some/prefix/relative/path/custdata-1|relative/path/custdata-1|3", "b|some/prefix/custdata-2|custdata-2|4"]);
    // On one line, CRLF, and with a base: relative to the base.
    assert.deepEqual(short(parseManifest('[{"prefix":"s3://b/some/"},"x/1","x/2"]', sm)), ["b|some/x/1|x/1|1", "b|some/x/2|x/2|1"]);
    assert.deepEqual(short(parseManifest('[\r\n{"prefix":"s3://b/some/"},\r\n"x/1"\r\n]', { ...sm, base: { bucket: "b", prefix: "" } })), ["b|some/x/1|some/x/1|3"]);
  });

  it("refuses an array without a leading prefix object", () => {
    refuses('[\n"a",\n"b"\n]', sm, 'train.manifest:2: a SageMaker manifest starts with {"prefix": "s3://bucket/prefix/"}');
    refuses('[\n{"prefx": "s3://b/p/"},\n"b"\n]', sm, 'train.manifest:2: a SageMaker manifest starts with {"prefix": "s3://bucket/prefix/"}');
    refuses("[]", sm, 'train.manifest:1: a SageMaker manifest starts with {"prefix": "s3://bucket/prefix/"}; the array is empty');
    refuses('[{"prefix": "/local/p/"}, "a"]', sm, 'train.manifest:1: "prefix" is not an s3:// URL: "/local/p/"');
  });

  it("refuses a non-string element, an empty or folder key, with its line", () => {
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n\n42,\n"c"]', sm, "train.manifest:4: expected a key relative to the prefix (a string), found 42");
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n{"k": "x"}]', sm, 'train.manifest:3: expected a key relative to the prefix (a string), found {"k": "x"}');
    refuses('[{"prefix": "s3://b/p/"},\n""]', sm, "train.manifest:2: empty key");
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n"dir/"]', sm, 'train.manifest:3: s3://b/p/dir/ ends with "/": a folder, not an object');
    refuses('[{"prefix": "s3://b/p/"}]', sm, "train.manifest: no objects listed");
  });

  it("refuses bad JSON at the line of the error", () => {
    refuses('[{"prefix": "s3://b/p/"},\n"a"\n"b"]', sm, 'train.manifest:3: not valid JSON: expected "," or "]" after an element, found "\\""');
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n"b",\n]', sm, 'train.manifest:4: not valid JSON: a "," before "]" (JSON allows no trailing comma)');
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n"b\n]', sm, "train.manifest:3: not valid JSON: a string is not closed on its line");
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n"b"', sm, 'train.manifest:3: not valid JSON: the array is not closed ("]" missing)');
    refuses('[{"prefix": "s3://b/p/"},\n"a"]\n"b"', sm, 'train.manifest:3: not valid JSON: text after the closing "]"');
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n\nnope]', sm, /^train\.manifest:4: not valid JSON \(.*\)$/);
    refuses('[{"prefix": "s3://b/p/"},\n"a",\n"b\\x"]', sm, /^train\.manifest:3: not valid JSON \(.*\)$/);
    refuses('[\n{"prefix": "s3://b/p/",\n\n"x": [1, 2}\n,"a"]', sm, 'train.manifest:4: not valid JSON: "}" where "]" was expected');
    refuses('[\n{"prefix": "s3://b/p/",\n"x": [1, 2]\n', sm, "train.manifest:2: not valid JSON: an object or array is not closed");
  });

  it("applies the base rules to the prefix's objects", () => {
    refuses('[{"prefix": "s3://other/p/"},\n"a"]', { ...sm, base: { bucket: "b", prefix: "p/" } }, 'train.manifest:2: s3://other/p/a is in bucket "other", not in the base s3://b/p/');
  });
});

describe("plan/manifest: augmented manifests (JSON Lines)", () => {
  const aug = { name: "train.jsonl" };

  it("reads source-ref, ignoring other attributes and blank lines", () => {
    const text = '{"source-ref": "s3://b/img/1.jpg", "label": 3}\r\n\r\n{"label": 4, "source-ref": "s3://b/img/2.jpg", "meta": {"source-ref": "nested"}}\n';
    assert.equal(manifestForm(text), "json-lines");
    assert.deepEqual(short(parseManifest(text, aug)), ["b|img/1.jpg|img/1.jpg|1", "b|img/2.jpg|img/2.jpg|3"]);
  });

  it("reads the attribute --attribute names, and keys exactly as written", () => {
    const text = '{"image-ref": "s3://b/img/1.jpg ", "source-ref": "s3://b/other"}\n';
    assert.deepEqual(short(parseManifest(text, { ...aug, attribute: "image-ref" })), ["b|img/1.jpg |img/1.jpg |1"]);
  });

  it("refuses a missing attribute, bad JSON, a non-object, a non-URL, with the line", () => {
    refuses('{"source-ref": "s3://b/a"}\n{"label": 1}\n', aug, 'train.jsonl:2: no "source-ref" attribute; name the attribute that holds the URL with --attribute');
    refuses('{"source-ref": "s3://b/a"}\n', { ...aug, attribute: "image-ref" }, 'train.jsonl:1: no "image-ref" attribute');
    refuses('{"source-ref": "s3://b/a"}\n\n{"source-ref": "s3://b/b",}\n', aug, /^train\.jsonl:3: not valid JSON \(.*\)$/);
    refuses('{"source-ref": "s3://b/a"}\n{"source-ref":\n"s3://b/b"}\n', aug, /^train\.jsonl:2: not valid JSON \(.*\)$/);
    refuses('{"source-ref": "s3://b/a"}\n["s3://b/b"]\n', aug, "train.jsonl:2: expected a JSON object (an augmented manifest has one per line)");
    refuses('{"source-ref": "s3://b/a"}\n{"source-ref": "img/2.jpg"}\n', aug, 'train.jsonl:2: "source-ref" is not an s3:// URL: "img/2.jpg"');
    refuses('{"source-ref": 7}\n', aug, 'train.jsonl:1: "source-ref" is not an s3:// URL: 7');
    refuses('{"source-ref": "s3://b/dir/"}\n', aug, 'train.jsonl:1: s3://b/dir/ ends with "/": a folder, not an object');
    refuses('{"source-ref": "s3://c/a"}\n', based("b", ""), 'manifest.txt:1: s3://c/a is in bucket "c", not in the base s3://b/');
  });

  it("refuses --attribute for a form without attributes", () => {
    refuses("s3://b/a\n", { ...named, attribute: "image-ref" }, "manifest.txt: --attribute names a field of an augmented manifest (JSON Lines), but this is a list");
  });
});

describe("plan/manifest: refuseCollisions", () => {
  it("refuses two objects landing on one relative path, allows one object listed twice", () => {
    const entries = parseManifest("s3://b/x/1\ns3://b/x/2\ns3://b/x/1\n# same key, other bucket\ns3://c/x/2\n", named);
    assert.throws(
      () => refuseCollisions(entries, "manifest.txt"),
      (err: unknown) => err instanceof ManifestError && err.message === 'manifest.txt:5: s3://c/x/2 would land on "x/2", as s3://b/x/2 (line 2) does',
    );
    assert.doesNotThrow(() => refuseCollisions(entries.slice(0, 3), "manifest.txt"));
  });
});

describe("plan/manifest: sharding manifest entries", function () {
  this.timeout(60_000);

  it("splits 10,000 manifest entries of random sizes for N = 1..17: disjoint, whole, balanced by bytes, stable", () => {
    const random = seededRandom(25);
    const text = Array.from({ length: 10_000 }, (_, i) => `s3://bucket/train/${String(i).padStart(5, "0")}.tar`).join("\n");
    const entries = parseManifest(text, named);
    const sizes = new Map(entries.map((e) => [e.key, random() < 0.1 ? 0 : random() < 0.999 ? Math.floor(random() * 2 ** 26) : Math.floor(random() * 2 ** 35)]));
    const sizeOf = (e: ManifestEntry) => sizes.get(e.key) ?? -1;
    for (let n = 1; n <= 17; n++) assertGoodSplit(entries, n, sizeOf, `manifest, N=${n}`);
  });
});
