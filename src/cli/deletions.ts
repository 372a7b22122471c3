import type { ObjectResult } from "../engine/batch.js";
import type { Session } from "./session.js";

/**
 * One line per deleted key or aborted upload (rm, rb --force), as aws-cli
 * prints them: `delete: s3://b/k` on stdout, failures on stderr, JSON lines
 * instead with --json (through the session's ResultPrinter); counts for the
 * summary and the exit status.
 */
export class DeletionReport {
  deleted = 0;
  failed = 0;
  /** rm --from: listed keys that did not exist (nothing to delete; not a failure). */
  missing = 0;

  constructor(private readonly session: Session) {}

  readonly add = (r: ObjectResult): void => {
    if (r.status === "failed") this.failed++;
    else this.deleted++;
    this.session.printer.result({ ...r, action: "delete", destination: "" });
  };

  /** A listed key that was not there: one line on stderr (a JSON record with --json), counted apart. */
  readonly addMissing = (shown: string, message: string): void => {
    this.missing++;
    if (this.session.printer.mode === "json") this.session.printer.json({ action: "delete", source: shown, status: "missing", error: message });
    else this.session.printer.note(`s3x: nothing to delete: ${message}`);
  };
}
