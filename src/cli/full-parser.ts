import type { Argv } from "yargs";
import { packageVersion } from "./version.js";
import { withCommonOptions } from "./options.js";
import { explainUsageError } from "./usage.js";
import { commandFirst } from "./argv-order.js";
import type { CommandBuilder } from "./declared-options.js";
import { commandOptionsOf, PARSER_CONFIGURATION, SCRIPT_NAME, type CommandShape, type ParsedCommand } from "./plain-command-line.js";

/**
 * The command line through yargs: what cli/plain-command-line.ts leaves to
 * it (help, --version, options before the command, anything it would refuse).
 * yargs is loaded here, at the first such command line, not at start-up.
 */

/** A command as yargs declares it: its shape and the one line of help that says what it does. */
export interface CommandDeclaration extends CommandShape {
  describe: string;
}

/** A command line yargs refused: the one line to print (cli/usage.ts words it). */
export class UsageErrorFromParser extends Error {}

/**
 * Parses `words` (the command line, "-" already replaced by `stdioArg`).
 * Resolves with the command and its args, or undefined when yargs answered
 * the command line itself (--help, --version); throws UsageErrorFromParser.
 */
export async function parseWithYargs(words: readonly string[], commands: Readonly<Record<string, CommandDeclaration>>, stdioArg: string): Promise<ParsedCommand | undefined> {
  const { default: yargs } = await import("yargs");
  let chosen: ParsedCommand | undefined;
  // The shared options are known before the command too, as aws-cli users
  // type them (`s3x --endpoint-url URL ls`): otherwise `--quiet ls` would
  // read "ls" as the value of an unknown option.
  let parser: Argv = withCommonOptions(yargs())
    // Every option may come before, between or after the paths, as in aws-cli:
    // a repeatable option takes one value per occurrence (--exclude A --exclude B),
    // never the words after it; and an option has one name, without a camelCase twin.
    .parserConfiguration(PARSER_CONFIGURATION)
    .scriptName(SCRIPT_NAME)
    .usage("s3x <command> [options]\n\nFast S3 transfers: parallel ranged GETs and multipart PUTs, bounded memory.");
  for (const [name, declaration] of Object.entries(commands)) {
    parser = parser.command(declaration.usage, declaration.describe, (y) => declaration.builder(y) as Argv, (args) => {
      chosen = { command: name, args };
    });
  }
  parser = parser
    .example("s3x cp ./model.safetensors s3://bucket/models/", "upload a file (key models/model.safetensors)")
    .example("s3x cp s3://bucket/shards/0001.tar - | tar x", "stream an object to another program")
    .example("s3x sync ./dataset s3://bucket/dataset/ --exclude '*.tmp'", "upload what is new or changed")
    .example("s3x ls s3://bucket/dataset/ --recursive --human-readable", "list every object under a prefix")
    .demandCommand(1, "name a command")
    .strict()
    .version(packageVersion())
    .help()
    .alias("help", "h")
    .wrap(Math.min(110, process.stderr.columns ?? 100))
    .fail((message, err) => {
      if (err) throw err;
      // yargs applies the command's builder to this same parser: it knows the command's options by now.
      const typed = words.map((w) => (w === stdioArg ? "-" : w));
      const said = (message ?? "").replaceAll(stdioArg, "-");
      throw new UsageErrorFromParser(explainUsageError(said, typed, { commands: Object.keys(commands), options: optionNames(parser) }));
    });
  skipHelpCache(parser);
  const builders = Object.values(commands).map((c) => c.builder);
  const ordered = words[0]?.startsWith("-") || words[0] === "help" ? commandFirst(words, Object.keys(commands), flagNames(builders)) : words;
  await parser.parseAsync([...ordered]);
  return chosen;
}

/**
 * After starting a command, yargs renders the whole help text and keeps it
 * for a failure to print (~20 ms of CPU measuring and wrapping strings,
 * a tenth of a small command's run). s3x's failures are one line without
 * help (.fail above), so that rendering is skipped; --help is unaffected.
 */
function skipHelpCache(parser: object): void {
  type Internals = { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } };
  const usage = (parser as Internals).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === "function") usage.cacheHelpMessage = () => undefined;
}

/**
 * The names and aliases of every option that takes no value, in any command:
 * only asked when options come before the command (see argv-order.ts).
 */
function flagNames(builders: CommandBuilder[]): (name: string) => boolean {
  let names: Set<string> | undefined;
  return (name) => {
    if (!names) {
      names = new Set(["help", "h", "version"]);
      for (const builder of builders) {
        const declared = commandOptionsOf(builder);
        for (const flag of declared.boolean) {
          names.add(flag);
          for (const alias of declared.alias[flag] ?? []) names.add(alias);
        }
      }
    }
    return names.has(name) || (name.startsWith("no-") && names.has(name.slice(3)));
  };
}

/** Every option name and alias the parser knows at the point it failed. */
function optionNames(parser: object): string[] {
  type Options = { getOptions?: () => { key: Record<string, unknown>; alias: Record<string, string[]> } };
  const options = (parser as Options).getOptions?.();
  if (!options) return [];
  return [...Object.keys(options.key), ...Object.values(options.alias).flat()];
}
