import type { Argv, Options } from "yargs";

/**
 * What a command's builder declares, in the shape yargs hands to
 * yargs-parser (`getOptions()`), gathered without loading yargs.
 *
 * Why: building yargs's parser of every command costs ~8 ms of CPU per run,
 * a sixth of a one-object `cat` (issue #39). Every builder declares its
 * options and positionals through cli/option-table.ts (`.option` and
 * `.positional`); the rest of what it calls shapes only the help text. So a
 * stand-in that records those two calls and ignores the others learns what
 * the parser needs. test/unit/cli/plain-command-line.test.ts checks that
 * the record equals yargs's own for every command.
 */
export interface DeclaredOptions {
  /** Every option name (not the aliases). */
  key: Record<string, true>;
  boolean: string[];
  string: string[];
  number: string[];
  array: string[];
  alias: Record<string, string[]>;
  default: Record<string, unknown>;
  /** Accepted but left out of help and completion. */
  hidden: string[];
  /** The positionals the builder describes, in order. */
  positionals: string[];
}

export type CommandBuilder = (y: Argv) => unknown;

/** Runs `builder` against a recorder and returns what it declared. */
export function declaredOptionsOf(builder: CommandBuilder): DeclaredOptions {
  const declared: DeclaredOptions = { key: {}, boolean: [], string: [], number: [], array: [], alias: {}, default: {}, hidden: [], positionals: [] };
  const record = (name: string, options: Options): void => {
    // Declared again, an option keeps what it had and takes what is new, as in yargs.
    declared.key[name] = true;
    const add = (list: string[], value: string): void => void (list.includes(value) || list.push(value));
    if (options.type === "boolean" || options.type === "string" || options.type === "number") add(declared[options.type], name);
    if (options.array) add(declared.array, name);
    for (const alias of options.alias === undefined ? [] : [options.alias].flat()) add((declared.alias[name] ??= []), alias);
    if ("default" in options) declared.default[name] = options.default;
    if (options.hidden) add(declared.hidden, name);
  };
  const recorder: Argv = new Proxy({} as Argv, {
    get(_target, property) {
      switch (property) {
        case "option":
        case "options":
          return (name: string, options: Options) => (record(name, options), recorder);
        case "positional":
          return (name: string) => (declared.positionals.push(name), recorder);
        case "getOptions":
          // cli/options.ts asks whether the shared options are declared yet.
          return () => declared;
        default:
          // .example(), .group(), .usage()…: help text only.
          return () => recorder;
      }
    },
  });
  builder(recorder);
  return declared;
}
