import type { ObjectResult } from "../engine/batch.js";
import { reportError } from "./errors.js";
import type { Session } from "./session.js";

/**
 * One line per deleted key or aborted upload (rm, rb --force), as aws-cli
 * prints them: `delete: s3://b/k` on stdout, failures on stderr, `--json`
 * lines instead with --json; counts for the summary and the exit status.
 */
export class DeletionReport {
  deleted = 0;
  failed = 0;

  constructor(
    private readonly session: Session,
    private readonly args: { json: boolean; quiet: boolean },
  ) {}

  readonly add = (r: ObjectResult): void => {
    const { session, args } = this;
    if (r.status === "failed") {
      this.failed++;
      if (args.json) session.stdout.print(JSON.stringify({ action: "delete", source: r.source, status: "failed", error: reportError(r.error).message }) + "\n");
      else process.stderr.write(`s3x: delete failed: ${r.source}: ${reportError(r.error).message}\n`);
      return;
    }
    this.deleted++;
    if (args.json) session.stdout.print(JSON.stringify({ action: "delete", source: r.source, status: r.status }) + "\n");
    else if (!args.quiet) session.stdout.print(`${r.status === "dryrun" ? "(dryrun) " : ""}delete: ${r.source}\n`);
  };
}
