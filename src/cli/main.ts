import { cpBuilder, runCp } from "./commands/cp.js";
import { syncBuilder, runSync } from "./commands/sync.js";
import { mvBuilder, runMv } from "./commands/mv.js";
import { presignBuilder, runPresign } from "./commands/presign.js";
import { lsBuilder, runLs } from "./commands/ls.js";
import { rmBuilder, runRm } from "./commands/rm.js";
import { catBuilder, runCat } from "./commands/cat.js";
import { mbBuilder, rbBuilder, runMb, runRb } from "./commands/buckets.js";
import { COMPLETE_REQUEST, completionBuilder, runCompletion } from "./commands/completion.js";
import { ExitCode, reportError } from "./errors.js";
import type { CommonArgs } from "./options.js";
import { resolveOptionSources, resolveRunOptions, type OptionSources, type ParsedArgs, type RunOptions } from "./resolve-options.js";
import { parsePlainCommandLine, positionalsOf, type ParsedCommand } from "./plain-command-line.js";
import type { CommandDeclaration } from "./full-parser.js";

/** What a command's handler gets: its args, the run's shared options (resolved on demand), the command line as typed. */
type CommandRun = (args: ParsedArgs, runOptions: () => Promise<RunOptions>, argv: string[]) => Promise<number> | number;

interface Command extends CommandDeclaration {
  run: CommandRun;
}

/** A command's handler as the commands write it: its own args type, the run's options resolved, the words typed. */
function withRunOptions<A>(handler: (args: A, run: RunOptions, argv: string[]) => Promise<number>): CommandRun {
  return async (args, runOptions, argv) => handler(args as unknown as A, await runOptions(), argv);
}

/** s3x's commands, in the order help lists them. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  cp: {
    usage: "cp <source> [destination]",
    describe: "copy one object: file ↔ S3, S3 → stdout (-), stdin (-) → S3, S3 → S3; many with --recursive or --from",
    builder: cpBuilder,
    run: withRunOptions(runCp),
  },
  mv: {
    usage: "mv <source> <destination>",
    describe: "move: copy as cp does, then delete each source once its copy is complete",
    builder: mvBuilder,
    run: withRunOptions(runMv),
  },
  sync: {
    usage: "sync <source> <destination>",
    describe: "copy what is missing or changed: directory ↔ prefix, prefix → prefix",
    builder: syncBuilder,
    run: withRunOptions(runSync),
  },
  ls: {
    usage: "ls [path]",
    describe: "list buckets, a prefix (one level), or everything under it (--recursive)",
    builder: lsBuilder,
    run: withRunOptions(runLs),
  },
  rm: {
    usage: "rm [path]",
    describe: "delete an object, or every object under a prefix (--recursive)",
    builder: rmBuilder,
    run: withRunOptions(runRm),
  },
  mb: { usage: "mb <bucket>", describe: "make a bucket", builder: mbBuilder, run: withRunOptions(runMb) },
  rb: {
    usage: "rb <bucket>",
    describe: "remove an empty bucket, or with --force everything in it and then the bucket",
    builder: rbBuilder,
    run: withRunOptions(runRb),
  },
  presign: {
    usage: "presign <path>",
    describe: "print a presigned URL that GETs an object without credentials until it expires",
    builder: presignBuilder,
    run: withRunOptions(runPresign),
  },
  cat: {
    usage: "cat [source]",
    describe: "write objects to stdout one after another: an object, every object under a prefix/, or a manifest's (--from); --tar frames them",
    builder: catBuilder,
    run: withRunOptions(runCat),
  },
  // `s3x completion >> ~/.bashrc`: tab completion of commands, options and S3 URLs (cli/completion.ts).
  completion: {
    usage: "completion [shell]",
    describe: "print the tab completion script for bash, zsh or fish (default: $SHELL's), to add to ~/.bashrc, ~/.zshrc or fish's completions",
    builder: completionBuilder,
    run: (args) => runCompletion(args.shell as string | undefined),
  },
};

/**
 * Entry point: parses the command line, runs one command, and turns any
 * failure into one line on stderr and a documented exit status.
 */
export async function main(argv: string[]): Promise<number> {
  if (argv[0] === COMPLETE_REQUEST) {
    const { complete } = await import("./completion.js");
    return complete(argv.slice(1), Object.fromEntries(Object.entries(COMMANDS).map(([name, c]) => [name, c.builder])));
  }
  let parsed: ParsedCommand | undefined;
  let commandLine = "";
  try {
    parsed = await parseCommandLine(argv);
    if (!parsed) return ExitCode.ok; // yargs printed the help or the version
    const { command, args } = parsed;
    // Every option not on the command line from its environment variable or the config file's
    // `s3 =` section, as the table says (cli/resolve-options.ts): before the command reads one.
    const sources: OptionSources = await resolveOptionSources(args, argv);
    commandLine = commandLineOf(command, args);
    /** The run's shared options, typed and checked (once the command line is known, so that an error names it). */
    const runOptions = (): Promise<RunOptions> => resolveRunOptions(args as unknown as CommonArgs, sources);
    return await COMMANDS[command].run(args, runOptions, argv);
  } catch (err) {
    const { UsageErrorFromParser } = await import("./full-parser.js");
    if (err instanceof UsageErrorFromParser) {
      process.stderr.write(`s3x: ${err.message} (see s3x --help)\n`);
      return ExitCode.usage;
    }
    const reported = reportError(err);
    if (reported.message) process.stderr.write(`s3x: ${commandLine ? commandLine + ": " : ""}${reported.message}\n`);
    return reported.exitCode;
  }
}

/**
 * The command and its args: a plain command line through yargs-parser alone
 * (cli/plain-command-line.ts), anything else through yargs. yargs-parser reads
 * a lone "-" as an empty option; s3x means stdin/stdout by it, so it is
 * hidden from both parsers and given back as typed, whatever the option or
 * positional.
 */
export async function parseCommandLine(argv: readonly string[]): Promise<ParsedCommand | undefined> {
  const words = argv.map((a) => (a === "-" ? STDIO_ARG : a));
  let parsed = parsePlainCommandLine(words, COMMANDS);
  if (!parsed) {
    const { parseWithYargs } = await import("./full-parser.js");
    parsed = await parseWithYargs(words, COMMANDS, STDIO_ARG);
  }
  if (parsed) for (const [name, value] of Object.entries(parsed.args)) parsed.args[name] = asTyped(value);
  return parsed;
}

/** A parsed value with "-" given back where it stood in (in a repeatable option's list too). */
function asTyped(value: unknown): unknown {
  if (value === STDIO_ARG) return "-";
  return Array.isArray(value) ? value.map((v) => (v === STDIO_ARG ? "-" : v)) : value;
}

/** Stands in for "-" while the parsers read the words; a NUL can never be part of a real path. */
export const STDIO_ARG = "\u0000-";

/** How messages name the command: `cp SOURCE DESTINATION`, its paths as given. */
function commandLineOf(command: string, args: ParsedArgs): string {
  const { demanded, optional } = positionalsOf(COMMANDS[command].usage);
  return [command, ...[...demanded, ...optional].map((name) => args[name]).filter((value) => value !== undefined)].join(" ").trim();
}

export function run(): void {
  // The words after `node bin/s3x.js` (yargs's hideBin says the same outside Electron; importing
  // it would load yargs's platform shims, cliui and y18n at every start: ~1 ms of CPU).
  main(process.argv.slice(2)).then(
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
