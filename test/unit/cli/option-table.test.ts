import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import yargs from "yargs";
import { declareOptions, knownArgNames, OPTION_TABLE, POSITIONAL_TABLE, type OptionName, type OptionSpec } from "../../../src/cli/option-table.js";
import { S3_CONFIG_SETTINGS } from "../../../src/cli/s3-config.js";

/**
 * One table of options (issue #38): the sources of cli/ (read as text; the
 * compiled test runs from dist/test/unit/cli/) declare no option outside
 * src/cli/option-table.ts, and read none it does not define.
 */
const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, "..", "..", "..", "..", "src", "cli");
const TABLE_FILE = "option-table.ts";

/** src/cli/*.ts and src/cli/commands/*.ts, but the table: path relative to src/cli → text. */
function cliSources(): Map<string, string> {
  const files = new Map<string, string>();
  for (const dir of ["", "commands"]) {
    for (const name of readdirSync(join(CLI, dir))) {
      if (!name.endsWith(".ts") || (dir === "" && name === TABLE_FILE)) continue;
      files.set(join(dir, name), readFileSync(join(CLI, dir, name), "utf8"));
    }
  }
  return files;
}

/** The option names a source reads: args.name, args["name"], args?.name, args?.["name"]. */
export function argReads(text: string): string[] {
  const reads: string[] = [];
  for (const match of text.matchAll(/\bargs\??\.(?:\[\s*"([^"]+)"\s*\]|([A-Za-z_$][\w$]*))|\bargs\[\s*"([^"]+)"\s*\]/g)) {
    reads.push(match[1] ?? match[2] ?? match[3]);
  }
  return reads;
}

describe("option table: every option s3x accepts, declared and read through one module", () => {
  let sources: Map<string, string>;

  before(() => {
    assert.ok(existsSync(join(CLI, TABLE_FILE)), `no table at ${join(CLI, TABLE_FILE)}`);
    sources = cliSources();
    assert.ok(sources.size > 20, `only ${sources.size} files read under ${CLI}`);
  });

  it("reads option names in each way a source writes them", () => {
    assert.deepEqual(argReads(`args.json; args["part-size"]; args?.["dns-server"]; args?.quiet; cpArgs.x; myargs.y`), ["json", "part-size", "dns-server", "quiet"]);
  });

  it("no cli/ file but the table declares an option or a positional", () => {
    const declaring = [...sources].filter(([, text]) => /\.(option|positional)\(/.test(text)).map(([file]) => file);
    assert.deepEqual(declaring, []);
  });

  it("every option or positional a cli/ file reads from its args is one of the table", () => {
    const known = knownArgNames();
    const unknown: string[] = [];
    for (const [file, text] of sources) for (const name of argReads(text)) if (!known.has(name)) unknown.push(`${file}: args.${name}`);
    assert.deepEqual(unknown, []);
  });

  it("says for every option what aws-cli means by it, and knows the positionals the commands read", () => {
    for (const [name, spec] of Object.entries(OPTION_TABLE) as [string, OptionSpec][]) assert.ok(spec.aws.length > 0, `--${name}: no aws-cli meaning`);
    for (const positional of ["source", "destination", "path", "bucket", "shell"]) assert.ok(positional in POSITIONAL_TABLE, positional);
  });

  it("names as an option's config source exactly the s3 = settings that set it (cli/s3-config.ts)", () => {
    const fromSettings = Object.entries(S3_CONFIG_SETTINGS).filter(([, m]) => m.option !== undefined).map(([setting, m]) => `${m.option}=${setting}`).sort();
    const fromTable = (Object.entries(OPTION_TABLE) as [string, OptionSpec][]).filter(([, spec]) => spec.config !== undefined).map(([name, spec]) => `${name}=${spec.config}`).sort();
    assert.deepEqual(fromTable, fromSettings);
  });

  it("declares an option to yargs as the table says, worded for the command that asks", () => {
    const declared = (names: OptionName[], command?: "rm") =>
      (declareOptions(yargs([]), names, command) as unknown as { getOptions(): { alias: Record<string, string[]>; default: Record<string, unknown>; array: string[]; hiddenOptions: string[] } }).getOptions();
    const plain = declared(["recursive", "exclude", "output"]);
    assert.deepEqual(plain.alias.recursive, ["r"]);
    assert.equal(plain.default.recursive, false);
    assert.ok(plain.array.includes("exclude"));
    assert.ok(plain.hiddenOptions.includes("output"));
    assert.ok(!("output" in plain.default), "an option without a default gets none");
  });

  it("reads an option's environment variable in one place: cli/resolve-options.ts, or the module the table names as its resolver", () => {
    const SRC = join(CLI, "..");
    const files = new Map<string, string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(SRC, dir), { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".ts")) files.set(path, readFileSync(join(SRC, path), "utf8"));
      }
    };
    walk("");
    assert.ok(files.size > 100, `only ${files.size} files under ${SRC}`);
    const misplaced: string[] = [];
    let variables = 0;
    for (const [name, spec] of Object.entries(OPTION_TABLE) as [string, OptionSpec][]) {
      const allowed = new Set(["cli/resolve-options.ts", spec.resolvedBy ?? "cli/resolve-options.ts"]);
      for (const variable of spec.env ?? []) {
        variables++;
        // Code that reads it: env.X, env["X"], env?.X (process.env included); comments and help text only name it.
        const read = new RegExp(`\\benv\\??\\.(?:${variable}\\b|\\[\\s*"${variable}"\\s*\\])|\\benv\\[\\s*"${variable}"\\s*\\]`);
        for (const [file, text] of files) if (read.test(text) && !allowed.has(file)) misplaced.push(`${file} reads $${variable} (--${name})`);
      }
    }
    assert.ok(variables >= 9, `the table names ${variables} variables`);
    assert.deepEqual(misplaced, []);
  });
});
