import yargs, { type Argv } from "yargs";
import { hideBin } from "yargs/helpers";
import { cpBuilder, runCp, type CpArgs } from "./commands/cp.js";
import { syncBuilder, runSync } from "./commands/sync.js";
import { mvBuilder, runMv } from "./commands/mv.js";
import { presignBuilder, runPresign, type PresignArgs } from "./commands/presign.js";
import { lsBuilder, runLs, type LsArgs } from "./commands/ls.js";
import { rmBuilder, runRm, type RmArgs } from "./commands/rm.js";
import { catBuilder, runCat, type CatArgs } from "./commands/cat.js";
import { mbBuilder, rbBuilder, runMb, runRb, type MbArgs, type RbArgs } from "./commands/buckets.js";
import type { SetArgs } from "./commands/transfer-set.js";
import { ExitCode, reportError } from "./errors.js";
import { packageVersion } from "./version.js";
import { withCommonOptions, type CommonArgs } from "./options.js";
import { explainUsageError } from "./usage.js";
import { commandFirst } from "./argv-order.js";
import { resolveOptionSources, resolveRunOptions, type OptionSources, type RunOptions } from "./resolve-options.js";
import { complete, COMPLETE_REQUEST, completionBuilder, runCompletion } from "./completion.js";

/** Each command's option builder, for what needs every command's options: completion, options typed before the command. */
const COMMAND_BUILDERS = { cp: cpBuilder, mv: mvBuilder, sync: syncBuilder, ls: lsBuilder, rm: rmBuilder, mb: mbBuilder, rb: rbBuilder, presign: presignBuilder, cat: catBuilder, completion: completionBuilder };

/**
 * Entry point: parses the command line, runs one command, and turns any
 * failure into one line on stderr and a documented exit status.
 */
export async function main(argv: string[]): Promise<number> {
  let exitCode: number = ExitCode.ok;
  let commandLine = "";
  let sources: OptionSources = { origins: new Map(), debugLines: [] };
  /** The run's shared options, typed and checked (once the command line is known, so that an error names it). */
  const runOptions = (args: object): Promise<RunOptions> => resolveRunOptions(args as unknown as CommonArgs, sources);
  // yargs-parser reads a lone "-" as an empty option; s3x means stdin/stdout by it.
  // The shared options are known before the command too, as aws-cli users
  // type them (`s3x --endpoint-url URL ls`): otherwise `--quiet ls` would
  // read "ls" as the value of an unknown option.
  const parser = withCommonOptions(yargs())
    // Every option may come before, between or after the paths, as in aws-cli:
    // a repeatable option takes one value per occurrence (--exclude A --exclude B),
    // never the words after it; and an option has one name, without a camelCase twin.
    .parserConfiguration({ "greedy-arrays": false, "camel-case-expansion": false })
    .scriptName("s3x")
    .usage("s3x <command> [options]\n\nFast S3 transfers: parallel ranged GETs and multipart PUTs, bounded memory.")
    .command(
      "cp <source> [destination]",
      "copy one object: file ↔ S3, S3 → stdout (-), stdin (-) → S3, S3 → S3; many with --recursive or --from",
      (y) => cpBuilder(y),
      async (args) => {
        const cpArgs = args as unknown as CpArgs;
        commandLine = `cp ${cpArgs.source} ${cpArgs.destination ?? ""}`.trim();
        exitCode = await runCp(cpArgs, await runOptions(cpArgs), argv);
      },
    )
    .command(
      "mv <source> <destination>",
      "move: copy as cp does, then delete each source once its copy is complete",
      (y) => mvBuilder(y),
      async (args) => {
        const mvArgs = args as unknown as CpArgs;
        commandLine = `mv ${mvArgs.source} ${mvArgs.destination}`;
        exitCode = await runMv(mvArgs, await runOptions(mvArgs), argv);
      },
    )
    .command(
      "sync <source> <destination>",
      "copy what is missing or changed: directory ↔ prefix, prefix → prefix",
      (y) => syncBuilder(y),
      async (args) => {
        const syncArgs = args as unknown as SetArgs;
        commandLine = `sync ${syncArgs.source} ${syncArgs.destination}`;
        exitCode = await runSync(syncArgs, await runOptions(syncArgs), argv);
      },
    )
    .command(
      "ls [path]",
      "list buckets, a prefix (one level), or everything under it (--recursive)",
      (y) => lsBuilder(y),
      async (args) => {
        commandLine = `ls ${args.path ?? ""}`.trim();
        exitCode = await runLs(args as unknown as LsArgs, await runOptions(args));
      },
    )
    .command(
      "rm [path]",
      "delete an object, or every object under a prefix (--recursive)",
      (y) => rmBuilder(y),
      async (args) => {
        commandLine = `rm ${args.path ?? ""}`.trim();
        exitCode = await runRm(args as unknown as RmArgs, await runOptions(args), argv);
      },
    )
    .command(
      "mb <bucket>",
      "make a bucket",
      (y) => mbBuilder(y),
      async (args) => {
        commandLine = `mb ${args.bucket}`;
        exitCode = await runMb(args as unknown as MbArgs, await runOptions(args));
      },
    )
    .command(
      "rb <bucket>",
      "remove an empty bucket, or with --force everything in it and then the bucket",
      (y) => rbBuilder(y),
      async (args) => {
        commandLine = `rb ${args.bucket}`;
        exitCode = await runRb(args as unknown as RbArgs, await runOptions(args));
      },
    )
    .command(
      "presign <path>",
      "print a presigned URL that GETs an object without credentials until it expires",
      (y) => presignBuilder(y),
      async (args) => {
        commandLine = `presign ${args.path}`;
        exitCode = await runPresign(args as unknown as PresignArgs, await runOptions(args));
      },
    )
    .command(
      "cat [source]",
      "write objects to stdout one after another: an object, every object under a prefix/, or a manifest's (--from); --tar frames them",
      (y) => catBuilder(y),
      async (args) => {
        commandLine = `cat ${args.source ?? ""}`.trim();
        exitCode = await runCat(args as unknown as CatArgs, await runOptions(args), argv);
      },
    )
    // `s3x completion >> ~/.bashrc`: tab completion of commands, options and S3 URLs (cli/completion.ts).
    .command(
      "completion [shell]",
      "print the tab completion script for bash, zsh or fish (default: $SHELL's), to add to ~/.bashrc, ~/.zshrc or fish's completions",
      (y) => completionBuilder(y),
      (args) => {
        exitCode = runCompletion(args.shell as string | undefined);
      },
    )
    .example("s3x cp ./model.safetensors s3://bucket/models/", "upload a file (key models/model.safetensors)")
    .example("s3x cp s3://bucket/shards/0001.tar - | tar x", "stream an object to another program")
    .example("s3x sync ./dataset s3://bucket/dataset/ --exclude '*.tmp'", "upload what is new or changed")
    .example("s3x ls s3://bucket/dataset/ --recursive --human-readable", "list every object under a prefix")
    // "-" reaches the commands as typed (see STDIO_ARG), whatever the option or positional.
    .middleware((args) => {
      for (const [name, value] of Object.entries(args)) if (value === STDIO_ARG) args[name] = "-";
    }, true)
    // Every option not on the command line from its environment variable or the config file's
    // `s3 =` section, as the table says (cli/resolve-options.ts): before any command reads one.
    .middleware(async (args) => {
      sources = await resolveOptionSources(args, argv);
    })
    .demandCommand(1, "name a command")
    .strict()
    .version(packageVersion())
    .help()
    .alias("help", "h")
    .wrap(Math.min(110, process.stderr.columns ?? 100))
    .fail((message, err) => {
      if (err) throw err;
      // yargs applies the command's builder to this same parser: it knows the command's options by now.
      throw new UsageErrorFromParser(explainUsageError(message ?? "", argv, { commands: commandNames, options: optionNames(parser) }));
    });
  const commandNames = registeredCommands(parser);
  if (argv[0] === COMPLETE_REQUEST) {
    return complete(argv.slice(1), COMMAND_BUILDERS);
  }
  skipHelpCache(parser);
  const words = argv[0]?.startsWith("-") || argv[0] === "help" ? commandFirst(argv, commandNames, flagNames(Object.values(COMMAND_BUILDERS))) : argv;
  try {
    await parser.parseAsync(words.map((a) => (a === "-" ? STDIO_ARG : a)));
  } catch (err) {
    if (err instanceof UsageErrorFromParser) {
      process.stderr.write(`s3x: ${err.message} (see s3x --help)\n`);
      return ExitCode.usage;
    }
    const reported = reportError(err);
    if (reported.message) process.stderr.write(`s3x: ${commandLine ? commandLine + ": " : ""}${reported.message}\n`);
    exitCode = reported.exitCode;
  }
  return exitCode;
}

class UsageErrorFromParser extends Error {}

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

/** Stands in for "-" while yargs parses; a NUL can never be part of a real path. */
const STDIO_ARG = "\u0000-";

/** The commands registered on the parser (yargs's internal command table). */
function registeredCommands(parser: object): string[] {
  type Internals = { getInternalMethods?: () => { getCommandInstance?: () => { getCommands?: () => string[] } } };
  const names = (parser as Internals).getInternalMethods?.().getCommandInstance?.().getCommands?.() ?? [];
  return names.map((name) => name.split(" ")[0]);
}

/**
 * The names and aliases of every option that takes no value, in any command:
 * only asked when options come before the command (see argv-order.ts).
 */
function flagNames(builders: ((y: Argv) => unknown)[]): (name: string) => boolean {
  let names: Set<string> | undefined;
  return (name) => {
    if (!names) {
      names = new Set(["help", "h", "version"]);
      for (const builder of builders) {
        type Options = { getOptions?: () => { boolean: string[]; alias: Record<string, string[]> } };
        const options = (builder(yargs([])) as Options).getOptions?.();
        for (const flag of options?.boolean ?? []) {
          names.add(flag);
          for (const alias of options?.alias[flag] ?? []) names.add(alias);
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

export function run(): void {
  main(hideBin(process.argv)).then(
    (code) => {
      process.exitCode = code;
      exitEvenIfSomethingLingers(code);
    },
    (err: unknown) => {
      process.stderr.write(`s3x: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exitCode = 70;
    },
  );
}

/** How long a process whose command has ended may stay alive before it is ended anyway (exitEvenIfSomethingLingers). */
const LINGER_GRACE_MS = 1_000;

/**
 * The last safety once the command has decided its exit status. By then its
 * transfers are settled and its connection pools closed (cli/session), so
 * the process ends by itself within milliseconds. Should something still
 * hold the event loop (a socket a bug left open), the server's idle timeout
 * (~65 s on radosgw, never behind some relays) would decide when s3x ends:
 * it exits anyway after a grace that lets file writes still under way (a
 * resume journal's last flush) finish. The timer is unref'd, so it never
 * delays a process that ends by itself; the exit status is the command's.
 */
function exitEvenIfSomethingLingers(code: number): void {
  setTimeout(() => process.exit(code), LINGER_GRACE_MS).unref();
}
