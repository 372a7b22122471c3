import type { RunOptions } from "../resolve-options.js";
import type { Argv } from "yargs";
import { parseLocation } from "../../plan/location.js";
import { withCommonOptions } from "../options.js";
import { checkObjectOptions } from "../object-options.js";
import { runMany } from "./transfer-set.js";
import { declareOptions } from "../option-table.js";
import { withShardOptions } from "./selection.js";
import { transferOptions, withSetOptions, type SetArgs } from "./transfer-options.js";

export function syncBuilder(y: Argv) {
  return declareOptions(withShardOptions(withSetOptions(transferOptions(withCommonOptions(y)))), ["delete", "size-only", "exact-timestamps"])
    .example("s3x sync ./dataset s3://bucket/dataset/", "upload what is missing or changed")
    .example("s3x sync s3://bucket/dataset/ ./dataset --delete --dryrun", "show what a mirroring download would copy and delete")
    .example("s3x sync s3://bucket/a/ s3://bucket/b/ --exclude '*' --include '*.json'", "copy only the .json objects between prefixes");
}

/**
 * `s3x sync SRC DST`: copies what is missing or differs (size differs, or
 * the source is newer), as aws-cli. Downloads set each file's mtime from the
 * object's LastModified, so a sync right after a sync transfers nothing.
 */
export function runSync(args: SetArgs, run: RunOptions, argv: readonly string[]): Promise<number> {
  checkObjectOptions(args);
  return runMany("sync", parseLocation(args.source), parseLocation(args.destination), args, run, argv);
}
