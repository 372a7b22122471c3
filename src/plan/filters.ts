/**
 * aws-cli's --include / --exclude: every path starts included; the filters
 * are applied in the order given and the last one that matches decides.
 * Patterns use fnmatch rules: `*` matches any run of characters (slashes
 * included), `?` one character, `[abc]` / `[!abc]` a class.
 *
 * As aws-cli (awscli/customizations/s3/filters.py) does, a relative pattern
 * is rooted twice, at the source and at the destination (a local directory's
 * absolute path, or "bucket/prefix"), and an absolute one stays as it is;
 * each path (a source entry's or, for sync --delete, a destination entry's)
 * is matched in full against both. So `--exclude "$PWD/d/sub/*"` names local
 * files, and `sync s3://b/ dir --delete --exclude "/abs/dir/keep.txt"` keeps
 * that file. An absolute pattern never matches an S3 path ("bucket/key").
 * s3x differs on purpose in one thing: a root is matched as literal text,
 * where aws-cli reads glob characters in a directory's name as a pattern.
 */
export interface Filter {
  kind: "include" | "exclude";
  pattern: string;
}

/**
 * Where patterns are rooted, as aws-cli roots them: a local directory's
 * absolute path, or "bucket/prefix" for S3. A side without a root (a
 * manifest, a stream) matches relative paths against the patterns as given.
 */
export interface FilterRoots {
  source?: string;
  destination?: string;
}

export type FilterSide = "source" | "destination";

export interface FilterSet {
  readonly filters: readonly CompiledFilter[];
  readonly roots: FilterRoots;
}

interface CompiledFilter {
  kind: "include" | "exclude";
  /** The pattern rooted at the source. */
  fromSource: RegExp;
  /** The pattern rooted at the destination. */
  fromDestination: RegExp;
}

export function compileFilters(filters: readonly Filter[], roots: FilterRoots = {}): FilterSet {
  return {
    roots,
    filters: filters.map((f) => ({ kind: f.kind, fromSource: rootedPattern(roots.source, f.pattern), fromDestination: rootedPattern(roots.destination, f.pattern) })),
  };
}

/** Whether the filters keep an entry, given by its path relative to the source or (sync --delete) the destination. */
export function isIncluded(set: FilterSet, relativePath: string, side: FilterSide = "source"): boolean {
  const path = rootPrefix(set.roots[side]) + relativePath;
  let included = true;
  for (const f of set.filters) {
    if (f.fromSource.test(path) || f.fromDestination.test(path)) included = f.kind === "include";
  }
  return included;
}

/** What a root puts before a relative path (os.path.join's way: one "/" between). */
function rootPrefix(root: string | undefined): string {
  if (!root) return "";
  return root.endsWith("/") ? root : `${root}/`;
}

function rootedPattern(root: string | undefined, pattern: string): RegExp {
  if (pattern.startsWith("/")) return globToRegExp(pattern);
  return new RegExp(`^${escapeRegExp(rootPrefix(root))}${globBody(pattern)}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Reads the filters in command-line order. yargs collects repeated options
 * per name, losing the interleaving, so they are read from argv directly.
 */
export function filtersFromArgv(argv: readonly string[]): Filter[] {
  const filters: Filter[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    for (const kind of ["include", "exclude"] as const) {
      if (arg === `--${kind}` && i + 1 < argv.length) filters.push({ kind, pattern: argv[++i] });
      else if (arg.startsWith(`--${kind}=`)) filters.push({ kind, pattern: arg.slice(kind.length + 3) });
    }
  }
  return filters;
}

export function globToRegExp(pattern: string): RegExp {
  return new RegExp(`^${globBody(pattern)}$`);
}

/** A glob as the body of a regular expression (unanchored). */
function globBody(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") out += "[\\s\\S]*";
    else if (c === "?") out += "[\\s\\S]";
    else if (c === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) {
        out += "\\[";
        continue;
      }
      let body = pattern.slice(i + 1, close);
      if (body.startsWith("!")) body = "^" + body.slice(1);
      out += `[${body.replace(/\\/g, "\\\\")}]`;
      i = close;
    } else out += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return out;
}
