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
});
