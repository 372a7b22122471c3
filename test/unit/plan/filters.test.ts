import assert from "node:assert/strict";
import { compileFilters, filtersFromArgv, globToRegExp, isIncluded } from "../../../src/plan/filters.js";

/** The examples of aws-cli's "Use of Exclude and Include Filters" documentation. */
describe("plan/filters (aws-cli semantics)", () => {
  const files = ["foo.txt", "bar.txt", "baz.jpg", "a/b.txt", "a/c/d.jpg"];
  const select = (argv: string[]): string[] => {
    const filters = compileFilters(filtersFromArgv(argv));
    return files.filter((f) => isIncluded(filters, f));
  };

  it("includes everything by default", () => {
    assert.deepEqual(select([]), files);
  });

  it('--exclude "*" --include "*.txt" keeps only .txt files (the later filter wins)', () => {
    assert.deepEqual(select(["--exclude", "*", "--include", "*.txt"]), ["foo.txt", "bar.txt", "a/b.txt"]);
  });

  it('--include "*.txt" --exclude "*" keeps nothing', () => {
    assert.deepEqual(select(["--include", "*.txt", "--exclude", "*"]), []);
  });

  it('--exclude "*.txt" excludes every .txt at any depth (* crosses /)', () => {
    assert.deepEqual(select(["--exclude", "*.txt"]), ["baz.jpg", "a/c/d.jpg"]);
  });

  it('--exclude "a/*" excludes a folder and everything below it', () => {
    assert.deepEqual(select(["--exclude", "a/*"]), ["foo.txt", "bar.txt", "baz.jpg"]);
  });

  it("reads --opt=value and keeps command-line order across include and exclude", () => {
    assert.deepEqual(filtersFromArgv(["--exclude=*", "--recursive", "--include", "*.jpg"]), [
      { kind: "exclude", pattern: "*" },
      { kind: "include", pattern: "*.jpg" },
    ]);
  });

  it("supports ? and character classes, and escapes regex characters", () => {
    assert.ok(globToRegExp("ba?.txt").test("bar.txt"));
    assert.ok(globToRegExp("[bf]*.txt").test("foo.txt"));
    assert.ok(!globToRegExp("[!bf]*.txt").test("foo.txt"));
    assert.ok(globToRegExp("a+b(1).txt").test("a+b(1).txt"));
    assert.ok(!globToRegExp("a.txt").test("abtxt"));
  });

  describe("rooted as aws-cli roots them (a directory's absolute path, bucket/prefix)", () => {
    const upload = { source: "/home/u/src", destination: "b/x/" };
    const included = (argv: string[], path: string, side: "source" | "destination" = "source", roots = upload) => isIncluded(compileFilters(filtersFromArgv(argv), roots), path, side);

    it("an absolute pattern matches a source file by its full path", () => {
      assert.equal(included(["--exclude", "/home/u/src/sub/*"], "sub/a.txt"), false);
      assert.equal(included(["--exclude", "/home/u/src/sub/*"], "top.txt"), true);
      assert.equal(included(["--exclude", "*", "--include", "/home/u/src/sub/*"], "sub/a.txt"), true);
    });

    it("an absolute pattern matches a destination file (sync --delete) by its full path", () => {
      const download = { source: "b/", destination: "/tmp/r1" };
      assert.equal(included(["--exclude", "/tmp/r1/keep.txt"], "keep.txt", "destination", download), false);
      assert.equal(included(["--exclude", "/tmp/r1/keep.txt"], "other.txt", "destination", download), true);
    });

    it("an absolute pattern never matches an S3 path", () => {
      assert.equal(included(["--exclude", "/x/a.txt"], "a.txt", "destination"), true);
      assert.equal(included(["--exclude", "/a.txt"], "a.txt", "source", { source: "b/", destination: "/tmp/out" }), true);
    });

    it("a relative pattern is rooted at both ends: a destination key under the source prefix matches (as aws-cli)", () => {
      // sync s3://b/ s3://b/backup/ --exclude "backup/*": "b/backup/y" matches "b/" + "backup/*".
      const roots = { source: "b/", destination: "b/backup/" };
      assert.equal(included(["--exclude", "backup/*"], "y", "destination", roots), false);
      assert.equal(included(["--exclude", "backup/*"], "backup/y", "source", roots), false);
      assert.equal(included(["--exclude", "backup/*"], "z", "source", roots), true);
    });

    it("a root is literal text, glob characters in a directory's name included", () => {
      assert.equal(included(["--exclude", "*.txt"], "a.txt", "source", { source: "/data[1]/x?", destination: "b/" }), false);
    });
  });
});
