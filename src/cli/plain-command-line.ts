import yargsParser from "yargs-parser";
import { declaredOptionsOf, type CommandBuilder, type DeclaredOptions } from "./declared-options.js";
import { withCommonOptions } from "./options.js";

/**
 * The parse of a plain command line without yargs: yargs-parser alone, with
 * the options the command declares and the configuration yargs gives it.
 *
 * Why: yargs builds a parser of every command and renders usage state on
 * every run, ~8 ms of CPU, a sixth of what a one-object `cat` costs in all
 * (issue #39: a process per shard). yargs-parser is the parser yargs itself
 * runs; what yargs adds is help, validation and commands. A command line
 * that needs none of them (the command first, then only options that
 * command declares and no more words than it takes) gets the same args
 * from yargs-parser alone: test/unit/cli/plain-command-line.test.ts checks
 * that on every option of every command. Anything else (help, --version,
 * options before the command, an unknown option, a missing or extra path,
 * `--`, a path "help") returns undefined, and yargs parses it as before,
 * with its messages.
 */

/** The parser configuration s3x gives yargs (cli/full-parser.ts): the same here. */
export const PARSER_CONFIGURATION = { "greedy-arrays": false, "camel-case-expansion": false } as const;

/** What yargs adds to it for every parse (yargs-factory's kRunYargsParserAndExecuteCommands). */
const YARGS_ADDS = { "parse-positional-numbers": false, "populate--": true } as const;

/** A command as the parsers need it: its yargs usage string (`cp <source> [destination]`) and its builder. */
export interface CommandShape {
  usage: string;
  builder: CommandBuilder;
}

/** A command line parsed: the command's name and its args, as yargs would hand them to the command's handler. */
export interface ParsedCommand {
  command: string;
  args: Record<string, unknown>;
}

/** The script name yargs puts in `$0`. */
export const SCRIPT_NAME = "s3x";

export function parsePlainCommandLine(words: readonly string[], commands: Readonly<Record<string, CommandShape>>): ParsedCommand | undefined {
  const command = words[0];
  if (command === undefined || !Object.hasOwn(commands, command)) return undefined;
  const shape = commands[command];
  const declared = declaredOf(command, shape.builder);
  const parsed = yargsParser.detailed(words.slice(1), {
    boolean: declared.boolean,
    string: declared.string,
    number: declared.number,
    array: declared.array,
    alias: declared.alias,
    default: declared.default,
    configuration: { ...PARSER_CONFIGURATION, ...YARGS_ADDS },
  });
  if (parsed.error) return undefined;
  const { _: rest, ...options } = parsed.argv;
  const known = knownNames(declared);
  for (const name of Object.keys(options)) if (!known.has(name)) return undefined;
  const { demanded, optional } = positionalsOf(shape.usage);
  if (rest.length < demanded.length || rest.length > demanded.length + optional.length) return undefined;
  // yargs reads a last word "help" as --help (`s3x cp help`): its call, not a path.
  if (rest.some((word) => word === "help")) return undefined;
  const args: Record<string, unknown> = { _: [command], ...options, $0: SCRIPT_NAME };
  [...demanded, ...optional].forEach((name, i) => {
    if (i < rest.length) args[name] = String(rest[i]);
  });
  return { command, args };
}

const declaredCache = new Map<string, DeclaredOptions>();

function declaredOf(command: string, builder: CommandBuilder): DeclaredOptions {
  let declared = declaredCache.get(command);
  if (!declared) declaredCache.set(command, (declared = commandOptionsOf(builder)));
  return declared;
}

/** What a command accepts: the shared options (declared before the commands in yargs: every command has them), then its own. */
export function commandOptionsOf(builder: CommandBuilder): DeclaredOptions {
  return declaredOptionsOf((y) => builder(withCommonOptions(y)));
}

/** Every name an option of `declared` may appear under in yargs-parser's result. */
function knownNames(declared: DeclaredOptions): Set<string> {
  const names = new Set(Object.keys(declared.key));
  for (const aliases of Object.values(declared.alias)) for (const alias of aliases) names.add(alias);
  return names;
}

/** The positionals of a yargs usage string: `<name>` demanded, `[name]` optional (s3x has no variadic ones). */
export function positionalsOf(usage: string): { demanded: string[]; optional: string[] } {
  const demanded: string[] = [];
  const optional: string[] = [];
  for (const match of usage.matchAll(/<([^>]+)>|\[([^\]]+)\]/g)) {
    if (match[1] !== undefined) demanded.push(match[1]);
    else optional.push(match[2]);
  }
  return { demanded, optional };
}
