import { basename, dirname, relative, resolve } from "node:path";
import type { ObjectResult } from "../engine/batch.js";
import { reportError } from "./errors.js";
import type { StdoutLines } from "./output.js";
import type { ProgressDisplay } from "./progress.js";

/**
 * How much a command prints, as aws-cli's flags define it:
 * - normal: one line per object on stdout, failures on stderr;
 * - errors (--only-show-errors): failures only;
 * - quiet (--quiet): nothing about objects, not even failures (the exit
 *   status says it); errors that end the whole run are still printed;
 * - json (--json): JSON Lines on stdout instead (see README "JSON output").
 */
export type OutputMode = "normal" | "errors" | "quiet" | "json";

export interface OutputArgs {
  quiet: boolean;
  json: boolean;
  "only-show-errors"?: boolean;
}

export function outputModeOf(args: OutputArgs): OutputMode {
  if (args.json) return "json";
  if (args.quiet) return "quiet";
  if (args["only-show-errors"]) return "errors";
  return "normal";
}

/** What the printer writes through: the command's stdout and its progress line. */
export interface PrinterOutputs {
  stdout: StdoutLines;
  progress: Pick<ProgressDisplay, "interrupt">;
}

/**
 * Prints the outcome of each object and the run's summary, on the right
 * stream, in aws-cli's words (`upload: ./a to s3://b/a`), erasing the
 * progress line first so the two never mix.
 */
export class ResultPrinter {
  constructor(
    private readonly out: PrinterOutputs,
    readonly mode: OutputMode,
    /** Where JSON lines go: stderr when stdout carries an object's bytes (`cp s3://b/k -`). */
    private readonly jsonToStderr = false,
  ) {}

  result(r: ObjectResult): void {
    if (r.status === "skipped" && r.warning === undefined) return;
    if (this.mode === "json") {
      const error = r.error === undefined ? undefined : reportError(r.error).message;
      this.json({ action: r.action, source: r.source, destination: r.destination || undefined, size: r.size, status: r.status, error, warning: r.warning });
      return;
    }
    if (r.status === "skipped") {
      // aws-cli's words, on stderr; --only-show-errors shows warnings too, --quiet nothing.
      if (this.mode !== "quiet") this.stderr(`warning: Skipping file ${shownPath(r.source)}. ${r.warning}`);
      return;
    }
    if (r.status === "failed") {
      if (this.mode !== "quiet") this.stderr(`s3x: ${r.action} failed: ${objectText(r)}: ${reportError(r.error).message}`);
      return;
    }
    // Nothing about an object whose bytes went to stdout (they are the output), nor
    // about an upload from stdin: aws-cli prints no line for either.
    if (this.mode !== "normal" || (r.status === "ok" && (r.destination === "-" || r.source === "-"))) return;
    this.stdoutLine(`${r.status === "dryrun" ? "(dryrun) " : ""}${r.action}: ${objectText(r)}`);
  }

  /** A line for people (a summary, a notice) on stderr; not in json, quiet or only-show-errors mode. */
  note(line: string): void {
    if (this.mode === "normal") this.stderr(line);
  }

  /** One JSON Lines record. */
  json(record: object): void {
    const text = JSON.stringify(record);
    if (this.jsonToStderr) this.stderr(text);
    else this.stdoutLine(text);
  }

  private stdoutLine(line: string): void {
    this.out.progress.interrupt(() => this.out.stdout.print(line + "\n"));
  }

  private stderr(line: string): void {
    this.out.progress.interrupt(() => process.stderr.write(line + "\n"));
  }
}

/** "SOURCE to DESTINATION", or the one path of a deletion, in aws-cli's forms. */
function objectText(r: ObjectResult): string {
  return r.destination ? `${shownPath(r.source)} to ${shownPath(r.destination)}` : shownPath(r.source);
}

/**
 * How aws-cli shows a local path: relative to the working directory, its
 * directory part at least "." (`./a`, `d/x.txt`, `../other/a`). S3 URLs and
 * "-" (stdin, stdout) stay as they are.
 */
export function shownPath(path: string): string {
  if (path === "-" || path.startsWith("s3://")) return path;
  const absolute = resolve(path);
  return `${relative(process.cwd(), dirname(absolute)) || "."}/${basename(absolute)}`;
}
