import type { RunOptions } from "../resolve-options.js";
import { unlink } from "node:fs/promises";
import type { Argv } from "yargs";
import { asDirectoryPrefix } from "../../plan/keys.js";
import { destinationKey, formatLocation, keyBaseName, parseLocation, UsageError, type Location } from "../../plan/location.js";
import { deleteOne } from "../../engine/delete.js";
import { runCp, type AfterCopy } from "./cp.js";
import { copyCommandOptions, type CpArgs, type SetArgs } from "./transfer-options.js";

/** `s3x mv` takes cp's options: it is cp, then the source removed. */
export function mvBuilder(y: Argv) {
  return copyCommandOptions(y)
    .example("s3x mv ./a.bin s3://bucket/dir/", "upload a file (key dir/a.bin), then delete the local file")
    .example("s3x mv s3://bucket/inbox/a.csv s3://bucket/done/", "move an object within S3 (server-side copy, then delete)")
    .example("s3x mv -r s3://bucket/tmp/ ./tmp --exclude '*.log'", "download every object under a prefix, deleting each once it is in place")
    .example("s3x mv -r ./out s3://bucket/out/ --dryrun", "show what a recursive move would do");
}

/**
 * `s3x mv SRC DST`, as aws-cli's: copies (file → S3, S3 → file, S3 → S3,
 * one object or with --recursive every one under a directory or prefix),
 * then deletes each source once its copy is complete — the upload
 * completed, the downloaded file in place under its name, the server-side
 * copy answered. A copy that fails deletes nothing.
 */
export async function runMv(args: CpArgs & Partial<SetArgs>, run: RunOptions, argv: readonly string[]): Promise<number> {
  const source = parseLocation(args.source);
  const dest = parseLocation(args.destination);
  if (source.kind === "stream" || dest.kind === "stream") throw new UsageError("mv cannot use - (stdin/stdout): there is no source to remove, or the copy would be lost");
  if (source.kind !== "s3" && dest.kind !== "s3") throw new UsageError("mv needs an s3:// URL as source or destination");
  if (args.resume) throw new UsageError("mv does not take --resume");
  refuseMoveOntoItself(source, dest, args.recursive === true);
  return runCp(args, run, argv, "mv", removeSource);
}

/** After a single object's copy: the source file or object goes. */
const removeSource: AfterCopy = async (session, source) => {
  if (source.kind === "local") await unlink(source.path);
  else if (source.kind === "s3") await deleteOne(session.context, source.bucket, source.key);
};

/**
 * A move onto itself would copy an object over itself and then delete it;
 * a recursive move into or out of its own prefix would list what it has just
 * written and move it again. Both are refused before anything is sent.
 */
function refuseMoveOntoItself(source: Location, dest: Location, recursive: boolean): void {
  if (source.kind !== "s3" || dest.kind !== "s3" || source.bucket !== dest.bucket) return;
  if (!recursive) {
    if (destinationKey(dest.key, keyBaseName(source.key)) === source.key) throw new UsageError(`cannot move ${formatLocation(source)} onto itself`);
    return;
  }
  const from = asDirectoryPrefix(source.key);
  const to = asDirectoryPrefix(dest.key);
  if (from.startsWith(to) || to.startsWith(from)) throw new UsageError(`cannot move ${formatLocation(source)} to ${formatLocation(dest)}: one prefix holds the other`);
}
