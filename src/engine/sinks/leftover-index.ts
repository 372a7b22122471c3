import { readdir } from "node:fs/promises";
import { basename, dirname } from "node:path";

/** The suffix of a download journal beside its temporary file (see file-sink.ts). */
export const JOURNAL_SUFFIX = ".s3x-part.journal";

/**
 * Which interrupted downloads a directory holds, read once per directory.
 *
 * Before a download starts, its sink looks for the journal an interrupted
 * run may have left (to resume or report it). For one file that is one
 * open() that usually fails; for thousands of objects going into a few
 * directories it is thousands of failed opens, each with an ENOENT error
 * built in JavaScript (~75 µs of the main thread's time per object in a
 * profile of 2,000 × 64 KiB downloads). A recursive download asks this
 * index instead: one readdir per directory, then a set lookup per file.
 */
export class LeftoverIndex {
  private readonly journals = new Map<string, Promise<Set<string> | "unreadable">>();

  /** False when `finalPath`'s directory certainly holds no journal for it (as of its first reading). */
  async mayHaveJournal(finalPath: string): Promise<boolean> {
    const directory = dirname(finalPath);
    let names = this.journals.get(directory);
    if (!names) {
      names = readdir(directory).then(
        (entries) => new Set(entries.filter((name) => name.endsWith(JOURNAL_SUFFIX))),
        // A directory not there yet holds nothing; one that cannot be read is left to the sink to probe.
        (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? new Set<string>() : "unreadable" as const),
      );
      this.journals.set(directory, names);
    }
    const found = await names;
    return found === "unreadable" || found.has(`.${basename(finalPath)}${JOURNAL_SUFFIX}`);
  }
}
