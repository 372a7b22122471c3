import assert from "node:assert/strict";
import yargs from "yargs";
import { COMMANDS, parseCommandLine, STDIO_ARG } from "../../../src/cli/main.js";
import { commandOptionsOf, parsePlainCommandLine, positionalsOf } from "../../../src/cli/plain-command-line.js";
import { parseWithYargs, UsageErrorFromParser } from "../../../src/cli/full-parser.js";
import { withCommonOptions } from "../../../src/cli/options.js";

/**
 * A plain command line is parsed by yargs-parser alone (cli/plain-command-line.ts),
 * without building yargs: these tests hold it to yargs's parse of the same
 * words, on every option of every command, and check that whatever yargs
 * would refuse or answer itself goes to yargs.
 */

/** The words a command line is made of, "-" hidden as main.ts hides it. */
function wordsOf(line: readonly string[]): string[] {
  return line.map((w) => (w === "-" ? STDIO_ARG : w));
}

/** Example paths for a command's positionals, demanded ones first. */
function pathsFor(command: string, count: number): string[] {
  const examples: Record<string, string[]> = {
    cp: ["s3://bucket/key", "-"],
    mv: ["./file", "s3://bucket/dir/"],
    sync: ["./dir", "s3://bucket/prefix/"],
    completion: ["bash"],
  };
  return (examples[command] ?? ["s3://bucket/prefix/"]).slice(0, count);
}

/** Command lines that use each option of `command` in every way it can be typed. */
function linesFor(command: string): string[][] {
  const declared = commandOptionsOf(COMMANDS[command].builder);
  const { demanded, optional } = positionalsOf(COMMANDS[command].usage);
  const paths = pathsFor(command, demanded.length + optional.length);
  const lines: string[][] = [[command, ...paths.slice(0, demanded.length)], [command, ...paths]];
  for (const name of Object.keys(declared.key)) {
    const aliases = declared.alias[name] ?? [];
    const forms: string[][] = [];
    if (declared.boolean.includes(name)) {
      forms.push([`--${name}`], [`--no-${name}`], [`--${name}=false`], [`--${name}`, "true"]);
      for (const alias of aliases) forms.push([alias.length === 1 ? `-${alias}` : `--${alias}`]);
    } else if (declared.number.includes(name)) {
      forms.push([`--${name}`, "5"], [`--${name}=2.5`], [`--${name}`, "many"], [`--${name}`, "0x10"]);
    } else {
      forms.push([`--${name}`, "value"], [`--${name}=a=b`], [`--${name}`, "-"], [`--${name}`, "12"], [`--${name}`, ""]);
    }
    if (declared.array.includes(name)) forms.push([`--${name}`, "a", `--${name}`, "b"]);
    for (const form of forms) {
      lines.push([command, ...paths, ...form]);
      lines.push([command, ...form, ...paths]);
    }
  }
  return lines;
}

describe("plain command lines: yargs-parser alone gives what yargs gives", function () {
  for (const command of Object.keys(COMMANDS)) {
    it(`${command}: every option, in every form, before and after the paths`, async () => {
      const lines = linesFor(command);
      assert.ok(lines.length > 2, "there are command lines to compare");
      for (const line of lines) {
        const words = wordsOf(line);
        const plain = parsePlainCommandLine(words, COMMANDS);
        assert.ok(plain, `${line.join(" ")}: parsed without yargs`);
        const full = await parseWithYargs(words, COMMANDS, STDIO_ARG);
        assert.deepEqual(plain, full, `${line.join(" ")}: the same args as yargs`);
      }
    });
  }

  it("a cluster of one-letter flags, numbers as paths, and every shared option at once", async () => {
    const lines = [
      ["rm", "s3://b/p/", "-rq"],
      ["ls", "12"],
      ["ls", "s3://b/", "--region", "a", "--region", "b", "--page-size=1", "--page-size", "2"],
      ["cp", "-", "s3://b/k", "--expected-size", "-", "--metadata", "a=b,c=d", "--endpoint-url="],
      ["cp", "007", "0x10", "--resolve", "h=1.2.3.4", "--resolve", "h=::1", "--exclude", "*", "--include", "a*"],
      ["cat", "s3://b/k", "--endpoint-url", "http://127.0.0.1:9000", "--region", "eu-west-1", "--no-sign-request", "--no-verify-ssl", "--max-attempts", "3", "--quiet", "--no-progress"],
    ];
    for (const line of lines) {
      const plain = parsePlainCommandLine(wordsOf(line), COMMANDS);
      assert.ok(plain, `${line.join(" ")}: parsed without yargs`);
      assert.deepEqual(plain, await parseWithYargs(wordsOf(line), COMMANDS, STDIO_ARG), line.join(" "));
    }
  });

  it("leaves to yargs what it must answer or refuse: help, version, unknown options and commands, a path too many or too few, options first, --", () => {
    const lines = [
      [],
      ["--help"],
      ["cp", "a", "b", "--help"],
      ["cat", "s3://b/k", "-h"],
      ["ls", "--version"],
      ["help", "cp"],
      ["cp", "a", "b", "--exlude", "x"],
      ["cp", "a", "b", "--no-such-thing"],
      ["snyc", "a", "b"],
      ["mv", "a"],
      ["mb"],
      ["cp", "a", "b", "c"],
      ["--quiet", "ls"],
      ["cp", "--", "-a", "b"],
      ["ls", "s3://b/", "--recursive", "--source", "x"],
      ["cat", "s3://b/k", "-rz"],
      ["__proto__"],
      ["toString"],
      // yargs reads a last word "help" as --help.
      ["ls", "help"],
      ["cp", "s3://b/k", "help"],
      ["mb", "help"],
      ["sync", "s3://b/p/", "help"],
    ];
    for (const line of lines) assert.equal(parsePlainCommandLine(wordsOf(line), COMMANDS), undefined, line.join(" "));
  });

  it("records each builder's options as yargs declares them", () => {
    for (const [command, { builder }] of Object.entries(COMMANDS)) {
      const recorded = commandOptionsOf(builder);
      type YargsOptions = { key: Record<string, unknown>; boolean: string[]; string: string[]; number: string[]; array: string[]; alias: Record<string, string[]>; default: Record<string, unknown>; hiddenOptions: string[] };
      const real = (builder(withCommonOptions(yargs([]))) as unknown as { getOptions(): YargsOptions }).getOptions();
      const positionals = new Set(recorded.positionals);
      // Outside a command yargs records a positional as one more option; yargs adds help and version.
      const aliases = new Set(Object.values(real.alias).flat());
      const ownKeys = (names: Iterable<string>) => [...names].filter((n) => !positionals.has(n) && !aliases.has(n) && n !== "help" && n !== "version").sort();
      assert.deepEqual(ownKeys(Object.keys(recorded.key)), ownKeys(Object.keys(real.key)), `${command}: option names`);
      for (const list of ["boolean", "string", "number", "array"] as const) assert.deepEqual(ownKeys(recorded[list]), ownKeys(real[list]), `${command}: ${list}`);
      for (const name of ownKeys(Object.keys(real.key))) {
        assert.deepEqual(recorded.alias[name] ?? [], real.alias[name] ?? [], `${command} --${name}: aliases`);
        assert.deepEqual(recorded.default[name], real.default[name], `${command} --${name}: default`);
      }
      assert.deepEqual(ownKeys(recorded.hidden), ownKeys(real.hiddenOptions), `${command}: hidden options`);
    }
  });

  it("gives \"-\" back as typed, in a repeatable option's list too, and names it so in a usage error", async () => {
    const parsed = await parseCommandLine(["cp", "-", "s3://b/k", "--exclude", "-", "--exclude", "x"]);
    assert.equal(parsed?.args.source, "-");
    assert.deepEqual(parsed?.args.exclude, ["-", "x"]);
    await assert.rejects(parseWithYargs(wordsOf(["cp", "a", "b", "-"]), COMMANDS, STDIO_ARG), (err: Error) => err instanceof UsageErrorFromParser && err.message === 'unexpected argument "-"');
  });
});
