import yargs, { type Argv } from "yargs";
import { bucketList } from "../engine/single-requests.js";
import { listObjectPages } from "../engine/listing.js";
import type { TransferContext } from "../engine/context.js";
import { withCommonOptions, type CommonArgs } from "./options.js";
import { resolveOptionSources, resolveRunOptions, type OptionSources } from "./resolve-options.js";
import { Session } from "./session.js";
import { COMPLETION_SHELLS } from "./completion-scripts.js";
import { commandOptionsOf } from "./plain-command-line.js";

/**
 * Tab completion, as aws_completer does it: the shell script that
 * `s3x completion [bash|zsh|fish]` prints calls `s3x __complete WORD…` with
 * the words typed so far (the last one being completed), and s3x answers
 * with the candidates: commands, a command's options (the ones its help
 * lists: no hidden aws-compat option, short aliases as `-q`, `--no-X` for
 * the switches that are on by default) and S3 URLs, listed with the user's
 * credentials and endpoint like `ls` does. A local path is left to the
 * shell's own file completion. The `completion` command that prints the
 * script is cli/commands/completion.ts. This module is loaded only to
 * answer a request (it loads yargs).
 */

/** The builder of each command, by name: its options and, for the command names, the keys. */
export type CommandBuilders = Record<string, (y: Argv) => unknown>;

/**
 * What a completion request prints: a first line saying how to complete
 * ("files": the shell's file completion; "words": exactly the lines
 * after it, possibly none), then the candidates.
 */
type Answer = { mode: "files" } | { mode: "words"; candidates: string[] };

/** How long listing S3 may take in all: past it the shell gets nothing rather than hanging the Tab key. */
const REMOTE_BUDGET_MS = 2_000;
/** A request's own limits inside that budget, in seconds (the options' units). */
const REMOTE_CONNECT_TIMEOUT_S = 1;
const REMOTE_READ_TIMEOUT_S = 1.5;

/**
 * Answers one completion request: `words` are those after "s3x", the last
 * one the word being completed ("" for a new one). Nothing goes to stderr
 * and the exit status is 0 whatever happens: a shell would print either
 * into the command line being typed.
 */
export async function complete(words: string[], builders: CommandBuilders): Promise<number> {
  let answer: Answer;
  try {
    answer = await answerFor(words.length > 0 ? words : [""], builders);
  } catch {
    answer = { mode: "words", candidates: [] };
  }
  const text = answer.mode === "files" ? "files\n" : ["words", ...answer.candidates].join("\n") + "\n";
  await new Promise<void>((resolve) => process.stdout.write(text, () => resolve()));
  // A credential lookup or a socket left over from a listing cut short must not keep the shell waiting.
  setTimeout(() => process.exit(0), 100).unref();
  return 0;
}

async function answerFor(words: string[], builders: CommandBuilders): Promise<Answer> {
  const current = words[words.length - 1];
  const typed = words.slice(0, -1);
  const line = readTyped(typed, builders);
  if (line.unknownCommand) return { mode: "words", candidates: [] };
  if (line.awaitingValue) return { mode: "files" };
  const matching = (candidates: string[]): Answer => ({ mode: "words", candidates: candidates.filter((c) => c.startsWith(current)) });
  if (current.startsWith("-") && !line.afterDoubleDash) return matching(optionsOf(line.command ? [builders[line.command]] : Object.values(builders)).offered);
  if (line.command === undefined || line.command === "help") return matching([...Object.keys(builders), ...(line.command ? [] : ["help"])]);
  if (line.command === "completion") return matching([...COMPLETION_SHELLS]);
  if (current.startsWith("s3://")) return { mode: "words", candidates: await remoteCandidates(current, typed) };
  if (current.length >= 2 && "s3://".startsWith(current)) return { mode: "words", candidates: ["s3://"] };
  return { mode: "files" };
}

interface TypedLine {
  /** The command named, if any yet. */
  command?: string;
  /** The first word that is not an option is no command s3x has: nothing to offer after it. */
  unknownCommand: boolean;
  /** The last word typed is an option that takes a value: the word being completed is that value. */
  awaitingValue: boolean;
  afterDoubleDash: boolean;
}

/** Reads the words before the one being completed as the parser would (options may come before the command: cli/argv-order.ts). */
function readTyped(typed: string[], builders: CommandBuilders): TypedLine {
  const line: TypedLine = { unknownCommand: false, awaitingValue: false, afterDoubleDash: false };
  for (let i = 0; i < typed.length; i++) {
    const word = typed[i];
    if (line.afterDoubleDash || !word.startsWith("-") || word === "-") {
      if (line.command === undefined) {
        if (word in builders || word === "help") line.command = word;
        else line.unknownCommand = true;
      }
      continue;
    }
    if (word === "--") {
      line.afterDoubleDash = true;
      continue;
    }
    const name = word.replace(/^--?/, "");
    if (name.includes("=")) continue;
    const flags = optionsOf(line.command && line.command in builders ? [builders[line.command]] : Object.values(builders)).flags;
    const isFlag = flags.has(name) || (name.startsWith("no-") && flags.has(name.slice(3))) || (!word.startsWith("--") && [...name].every((letter) => flags.has(letter)));
    if (isFlag) continue;
    if (i === typed.length - 1) line.awaitingValue = true;
    i++;
  }
  return line;
}

interface OfferedOptions {
  /** What Tab offers, as typed: `--name`, `-q`, `--no-progress`. */
  offered: string[];
  /** Every name and alias that takes no value. */
  flags: Set<string>;
}

const optionsCache = new Map<string, OfferedOptions>();

/** The options of the commands whose builders are given (all of them before the command is typed). */
function optionsOf(builders: ((y: Argv) => unknown)[]): OfferedOptions {
  const cacheKey = builders.map((b) => b.name).join(",");
  const cached = optionsCache.get(cacheKey);
  if (cached) return cached;
  const offered = new Set<string>(["--help"]);
  const flags = new Set<string>(["help", "h", "version"]);
  for (const builder of builders) {
    const declared = commandOptionsOf(builder);
    for (const name of declared.boolean) flags.add(name);
    for (const name of Object.keys(declared.key)) {
      if (declared.hidden.includes(name)) continue;
      const onByDefault = declared.boolean.includes(name) && declared.default[name] === true;
      // A switch that is on by default is only ever typed to turn it off.
      offered.add(onByDefault ? `--no-${name}` : `--${name}`);
      for (const alias of declared.alias[name] ?? []) offered.add(alias.length === 1 ? `-${alias}` : `--${alias}`);
    }
  }
  const options = { offered: [...offered].sort(), flags };
  optionsCache.set(cacheKey, options);
  return options;
}

/**
 * The S3 URLs that complete `word`: buckets (`s3://NAME/`) until a bucket is
 * named, then one level under the prefix typed, as `ls` lists it (first
 * page): sub-prefixes end in "/", then the keys. A listing that fails or
 * takes longer than REMOTE_BUDGET_MS offers nothing.
 */
async function remoteCandidates(word: string, typed: string[]): Promise<string[]> {
  const { args, sources } = await argsForListing(typed);
  const session = Session.open(await resolveRunOptions(args, sources), { progressAllowed: false });
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => {
      session.stop(new Error("completion listing took too long"));
      resolve([]);
    }, REMOTE_BUDGET_MS);
  });
  try {
    return await Promise.race([listMatching(session.context, word), budget]);
  } finally {
    clearTimeout(timer);
    // Not awaited: closing a connection that hangs must not hold the shell (complete() exits soon after).
    session.close().catch(() => undefined);
  }
}

async function listMatching(ctx: TransferContext, word: string): Promise<string[]> {
  const rest = word.slice("s3://".length);
  const slash = rest.indexOf("/");
  if (slash < 0) {
    const buckets = await bucketList(ctx);
    return buckets.map((b) => `s3://${b.name}/`).filter((url) => url.startsWith(word));
  }
  const bucket = rest.slice(0, slash);
  const prefix = rest.slice(slash + 1);
  for await (const page of listObjectPages(ctx, bucket, prefix, "/")) {
    return [...page.prefixes, ...page.objects.map((o) => o.key)].map((key) => `s3://${bucket}/${key}`).sort();
  }
  return [];
}

/**
 * The connection options typed on the line (--endpoint-url, --profile,
 * --region, --no-sign-request…), everything else as `ls` defaults it, with
 * timeouts that fit in the completion's budget and nothing printed.
 */
async function argsForListing(typed: string[]): Promise<{ args: CommonArgs; sources: OptionSources }> {
  const parsed = withCommonOptions(yargs())
    .parserConfiguration({ "greedy-arrays": false, "camel-case-expansion": false })
    .help(false)
    .version(false)
    .exitProcess(false)
    .parseSync(typed) as Record<string, unknown>;
  // The environment and the config file count as for a command ($AWS_CA_BUNDLE, the s3 = section); the budget's settings win.
  const sources = await resolveOptionSources(parsed, typed);
  const args: CommonArgs = {
    ...(parsed as unknown as CommonArgs),
    "connect-timeout": REMOTE_CONNECT_TIMEOUT_S,
    "read-timeout": REMOTE_READ_TIMEOUT_S,
    "cli-connect-timeout": undefined,
    "cli-read-timeout": undefined,
    "max-attempts": 2,
    concurrency: 2,
    quiet: true,
    "only-show-errors": false,
    debug: false,
    progress: false,
    json: false,
  };
  return { args, sources };
}
