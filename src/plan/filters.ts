/**
 * aws-cli's --include / --exclude: every path starts included; the filters
 * are applied in the order given and the last one that matches decides.
 * Patterns are matched against the path relative to the source directory
 * or prefix, with fnmatch rules: `*` matches any run of characters
 * (slashes included), `?` one character, `[abc]` / `[!abc]` a class.
 */
export interface Filter {
  kind: "include" | "exclude";
  pattern: string;
}

export type FilterSet = readonly CompiledFilter[];

interface CompiledFilter {
  kind: "include" | "exclude";
  regex: RegExp;
}

export function compileFilters(filters: readonly Filter[]): FilterSet {
  return filters.map((f) => ({ kind: f.kind, regex: globToRegExp(f.pattern) }));
}

export function isIncluded(filters: FilterSet, relativePath: string): boolean {
  let included = true;
  for (const f of filters) {
    if (f.regex.test(relativePath)) included = f.kind === "include";
  }
  return included;
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
  let out = "^";
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
  return new RegExp(out + "$");
}
