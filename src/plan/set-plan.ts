import { isIncluded, type FilterSet } from "./filters.js";
import { needsCopy, type EntryState, type SyncDirection, type SyncRules } from "./sync.js";

/**
 * The set planner: what cp --recursive, mv --recursive and sync do with
 * every entry of a Source, given a Destination and the rules, whichever way
 * the bytes go (upload, download, S3→S3 copy). One code path for all
 * directions, as rclone's one walker for every pair of backends: a new end
 * (a manifest, a stream) is a new Source or Destination, not a new planner.
 *
 * Layering: plan/ defines the Source and Destination interfaces, engine/
 * implements them (walking a directory, listing a prefix, stat'ing files:
 * engine/set-ends.ts) and executes the actions (engine/set-executor.ts).
 * Why this way round: plan/ then imports no layer that does I/O, so every
 * decision is tested over in-memory ends, and a new end is an engine class
 * the planner needs no change for.
 */

/** One thing a source holds: a file under a directory or an object under a prefix. */
export interface SetEntry<Ref> {
  /** "/"-separated path relative to the source directory or prefix (what filters match). */
  relativePath: string;
  size: number;
  /** Milliseconds since the epoch: the file's mtime or the object's LastModified. */
  mtimeMs: number;
  /** How the source finds it again (a file path, an S3 object). */
  ref: Ref;
}

/** Part of a source that could not be read (an unreadable directory, a symlink loop). */
export interface SourceProblem {
  /** How the output names the unread part. */
  shown: string;
  message: string;
  /**
   * The unread part relative to the source ("." for its root): --delete
   * leaves whatever the destination holds under it, since nobody knows
   * whether the source still has it. Absent: the whole source is in doubt.
   */
  relativePath?: string;
  /**
   * Not a problem but a file left out with a warning (a named pipe, a dangling
   * symlink: engine/walk): the filters decide whether it is mentioned, and
   * --delete treats it as absent, as aws-cli does.
   */
  skipped?: boolean;
  /** A named object (a manifest's line) that does not exist: rm --from reports it as missing, not as a failure. */
  absent?: boolean;
}

export type SourceItem<Ref> = { entry: SetEntry<Ref> } | { problem: SourceProblem };

export interface SetSource<Ref> {
  /** Which side the bytes come from: decides the sync rules' direction. */
  readonly side: "local" | "s3";
  /** The source as the user wrote it, for messages. */
  readonly name: string;
  /** Every entry (and every problem met on the way), streamed as found. */
  items(): AsyncIterable<SourceItem<Ref>>;
  /** True once items() was read to its end, each page checked: only then may --delete act on what the source lacks. */
  readonly whole: boolean;
  /** How the output names an entry ("./data/a.bin", "s3://b/k"). */
  shown(entry: SetEntry<Ref>): string;
  /** How a refusal names an entry (`key "a/../../x"`). */
  described(entry: SetEntry<Ref>): string;
}

/** Where a source entry lands, or why it may not. */
export type Placement<Target> =
  | { ok: true; relativePath: string; target: Target; shown: string }
  /** `evenIfExcluded`: refused before the filters are asked (a key no file can be named after is reported whatever the filters say). */
  | { ok: false; reason: string; shown: string; evenIfExcluded: boolean };

/** What a destination holds at a relative path, for deletions. */
export interface DestinationEntry<Target> {
  relativePath: string;
  target: Target;
  shown: string;
}

export interface SetDestination<Target> {
  /** "stream": one byte stream (stdout, a named pipe) that takes every entry in order. */
  readonly side: "local" | "s3" | "stream";
  /** Where a source's relative path lands (key-to-path safety for local trees: plan/keys.ts). */
  place(relativePath: string, size: number): Placement<Target>;
  /**
   * Reads what the destination holds before anything is compared (an S3
   * prefix is listed whole; a local tree is stat'ed path by path instead and
   * has no prepare). The planner runs it while it reads the source.
   */
  prepare?(): Promise<void>;
  /** Size and time of what is already at a placement, if anything. */
  existing(placement: Placement<Target> & { ok: true }): Promise<EntryState | undefined>;
  /** Everything the destination holds (after prepare), for --delete. */
  entries(): AsyncIterable<DestinationEntry<Target>>;
}

export interface SetRules {
  filters: FilterSet;
  /** Skip entries the destination already has by the sync rules (sync, and cp --resume). */
  compare: boolean;
  sync: SyncRules;
  /** sync --delete: remove what the destination holds and the source lacks (never what the filters exclude). */
  delete: boolean;
  dryrun: boolean;
}

export type SetAction<Ref, Target> =
  /** Copy the entry to the target (or, in a dry run, only say so). */
  | { kind: "transfer"; entry: SetEntry<Ref>; target: Target; source: string; destination: string; dryrun: boolean }
  /** The destination already has it. */
  | { kind: "skip"; entry: SetEntry<Ref>; target: Target; source: string; destination: string }
  /** Nothing done: an entry refused (a key that would write outside the destination) or a part of the source unread. */
  | { kind: "refuse"; source: string; destination: string; size: number; error: Error }
  /** Nothing done: a source path that is not a file to transfer, left out with a warning. */
  | { kind: "warn"; source: string; warning: string }
  /** Remove the target (or, in a dry run, only say so). */
  | { kind: "delete"; target: Target; shown: string; dryrun: boolean };

/** The direction the sync rules compare in (plan/sync.ts). */
export function directionOf(source: { side: "local" | "s3" }, destination: { side: "local" | "s3" | "stream" }): SyncDirection {
  if (source.side === "local" && destination.side === "s3") return "upload";
  if (source.side === "s3" && (destination.side === "local" || destination.side === "stream")) return "download";
  if (source.side === "s3" && destination.side === "s3") return "copy";
  throw new Error("a set goes from a local directory to S3, from S3 to a local directory, or between S3 prefixes");
}

/**
 * The actions for every entry of `source`, in the source's order, then
 * (--delete) the deletions. When comparing against a destination that must
 * be read first (an S3 prefix), the source is read into memory meanwhile,
 * and its problems come out first; otherwise entries stream, so transfers
 * start while the listing still pages.
 */
export async function* planSet<Ref, Target>(source: SetSource<Ref>, destination: SetDestination<Target>, rules: SetRules): AsyncGenerator<SetAction<Ref, Target>> {
  const direction = directionOf(source, destination);
  const problems: SetAction<Ref, Target>[] = [];
  const unread: SourceProblem[] = [];
  let entries: AsyncIterable<SetEntry<Ref>> | Iterable<SetEntry<Ref>>;
  if (rules.compare && destination.prepare) {
    const [, items] = await Promise.all([destination.prepare(), collect(source.items())]);
    for (const item of items) {
      if (!("problem" in item)) continue;
      const action = noteProblem<Ref, Target>(item.problem, rules, unread);
      if (action) yield action;
    }
    entries = items.flatMap((item) => ("entry" in item ? [item.entry] : []));
  } else {
    entries = streamEntries(source.items(), (problem) => {
      const action = noteProblem<Ref, Target>(problem, rules, unread);
      if (action) problems.push(action);
    });
  }
  const seen = new Set<string>();
  for await (const entry of entries) {
    yield* problems.splice(0);
    const action = await decide(entry, source, destination, rules, direction, seen);
    if (action) yield action;
  }
  yield* problems.splice(0);
  if (rules.delete) yield* deletions(source, destination, rules, seen, unread);
}

/** One entry's action, or none when the filters exclude it. */
async function decide<Ref, Target>(
  entry: SetEntry<Ref>,
  source: SetSource<Ref>,
  destination: SetDestination<Target>,
  rules: SetRules,
  direction: SyncDirection,
  seen: Set<string>,
): Promise<SetAction<Ref, Target> | undefined> {
  const placement = destination.place(entry.relativePath, entry.size);
  const refuse = (reason: string, shown: string): SetAction<Ref, Target> => ({ kind: "refuse", source: source.shown(entry), destination: shown, size: entry.size, error: new Error(`refused ${source.described(entry)}: ${reason}`) });
  if (!placement.ok && placement.evenIfExcluded) return refuse(placement.reason, placement.shown);
  if (!isIncluded(rules.filters, entry.relativePath)) return undefined;
  if (!placement.ok) return refuse(placement.reason, placement.shown);
  seen.add(placement.relativePath);
  const ends = { entry, target: placement.target, source: source.shown(entry), destination: placement.shown };
  if (rules.compare && !needsCopy(entry, await destination.existing(placement), direction, rules.sync)) return { kind: "skip", ...ends };
  return { kind: "transfer", ...ends, dryrun: rules.dryrun };
}

/**
 * --delete: what the destination holds that the source did not, never what
 * the filters exclude or what lies under a part of the source that could
 * not be read (an unreadable directory's files are not known to be gone),
 * and only after a whole source.
 */
async function* deletions<Ref, Target>(
  source: SetSource<Ref>,
  destination: SetDestination<Target>,
  rules: SetRules,
  seen: Set<string>,
  unread: readonly SourceProblem[],
): AsyncGenerator<SetAction<Ref, Target>> {
  if (!source.whole) throw new Error(`sync --delete: the listing of ${source.name} was not read to its end; nothing was deleted`);
  if (unread.some((problem) => problem.relativePath === undefined || problem.relativePath === ".")) {
    throw new Error(`sync --delete: ${source.name} could not be read whole; nothing was deleted`);
  }
  const unreadPrefixes = unread.map((problem) => `${problem.relativePath}/`);
  const underUnread = (path: string) => unread.some((problem) => path === problem.relativePath) || unreadPrefixes.some((prefix) => path.startsWith(prefix));
  for await (const held of destination.entries()) {
    if (seen.has(held.relativePath) || !isIncluded(rules.filters, held.relativePath, "destination") || underUnread(held.relativePath)) continue;
    yield { kind: "delete", target: held.target, shown: held.shown, dryrun: rules.dryrun };
  }
}

/**
 * A source problem's action: a skipped file warns (unless the filters leave
 * it out anyway: whoever excludes "*.sock" wants no warning about sockets;
 * aws-cli warns before it filters), anything else is a failure and marks
 * the unread part, which --delete leaves alone.
 */
function noteProblem<Ref, Target>(problem: SourceProblem, rules: SetRules, unread: SourceProblem[]): SetAction<Ref, Target> | undefined {
  if (problem.skipped) {
    if (problem.relativePath !== undefined && !isIncluded(rules.filters, problem.relativePath)) return undefined;
    return { kind: "warn", source: problem.shown, warning: problem.message };
  }
  unread.push(problem);
  return { kind: "refuse", source: problem.shown, destination: "", size: 0, error: new Error(problem.message) };
}

/** The entries of a stream of items, problems handed to `onProblem` as they come (before the entry after them). */
async function* streamEntries<Ref>(items: AsyncIterable<SourceItem<Ref>>, onProblem: (problem: SourceProblem) => void): AsyncGenerator<SetEntry<Ref>> {
  for await (const item of items) {
    if ("problem" in item) onProblem(item.problem);
    else yield item.entry;
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
