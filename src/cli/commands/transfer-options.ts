import type { Argv } from "yargs";
import { UsageError } from "../../plan/location.js";
import { MAX_SINGLE_COPY_SIZE, parseSize } from "../../plan/parts.js";
import { withCommonOptions, type CommonArgs } from "../options.js";
import { withObjectOptions, type ObjectOptionArgs } from "../object-options.js";

/** Options of cp and mv, for one object or (--recursive) many. */
export interface CpArgs extends CommonArgs, ObjectOptionArgs {
  source: string;
  destination: string;
  "part-size"?: string;
  "multipart-threshold": string;
  "content-type"?: string;
  "storage-class"?: string;
  metadata?: string;
  "keep-failed-uploads": boolean;
  "copy-threshold": string;
  "checksum-algorithm"?: string;
  resume: boolean;
  "verify-etag": boolean;
  recursive?: boolean;
  "expected-size"?: string;
}

/** Options of commands that handle many objects (cp --recursive, mv --recursive, sync). */
export interface SetArgs extends CpArgs {
  dryrun: boolean;
  "follow-symlinks": boolean;
  delete?: boolean;
  "size-only"?: boolean;
  "exact-timestamps"?: boolean;
}

export function withSetOptions<T>(y: Argv<T>) {
  return y
    .option("include", { type: "string", array: true, describe: "include paths matching this glob (later filters win)", group: "Selection:" })
    .option("exclude", { type: "string", array: true, describe: "exclude paths matching this glob (later filters win)", group: "Selection:" })
    .option("dryrun", { type: "boolean", default: false, describe: "print what would be done, change nothing", group: "Selection:" })
    .option("follow-symlinks", { type: "boolean", default: true, describe: "follow symlinks when uploading a directory (--no-follow-symlinks skips them)", group: "Selection:" });
}

/** The options of cp and mv (mv is cp, then each source removed). */
export function copyCommandOptions(y: Argv) {
  return withSetOptions(transferOptions(withCommonOptions(y)))
    .option("recursive", { alias: "r", type: "boolean", default: false, describe: "copy every object under a directory or prefix", group: "Selection:" });
}

/** Options of every command that writes objects (cp, mv, sync). */
export function transferOptions<T>(y: Argv<T>) {
  return withObjectOptions(y)
    // Required by each command's own usage string (`cp --from FILE DEST` takes one).
    .positional("source", { type: "string", describe: "s3://bucket/key, a local file, or - for stdin" })
    .positional("destination", { type: "string", describe: "s3://bucket/key, a local path, or - for stdout" })
    .option("part-size", { type: "string", describe: "part size (e.g. 16MiB); uploads raise it to stay within 10,000 parts", group: "Transfer:" })
    .option("multipart-threshold", { type: "string", default: "8MiB", describe: "files larger than this are uploaded in parts", group: "Transfer:" })
    .option("content-type", { type: "string", describe: "Content-Type of uploaded objects (default: guessed from the file name)", group: "Transfer:" })
    .option("storage-class", { type: "string", describe: "storage class of uploaded objects (STANDARD, INTELLIGENT_TIERING, …)", group: "Transfer:" })
    .option("metadata", { type: "string", describe: "user metadata: key=value[,key=value…] or a JSON object", group: "Transfer:" })
    .option("copy-threshold", { type: "string", default: "5GiB", describe: "S3→S3 copies above this use concurrent UploadPartCopy ranges (max 5GiB)", group: "Transfer:" })
    .option("keep-failed-uploads", { type: "boolean", default: false, describe: "do not abort a multipart upload that failed", group: "Transfer:" })
    .option("checksum-algorithm", { type: "string", describe: "checksum sent with uploads: CRC32C, CRC32, CRC64NVME, SHA256 or none; given, a server that does not check it is an error (default: $S3X_CHECKSUM_ALGORITHM, else CRC32C wherever the server checks it, dropped where it does not)", group: "Integrity:" })
    .option("verify-etag", { type: "boolean", default: false, describe: "check downloaded single-part objects against their MD5 ETag", group: "Integrity:" })
    .option("resume", { type: "boolean", default: false, describe: "continue interrupted uploads and downloads instead of starting over", group: "Integrity:" })
    .option("expected-size", { type: "string", describe: "uploads from stdin: the stream's expected size (e.g. 200GiB), so parts are large enough to stay within 10,000", group: "Transfer:" })
    // One region per run for now: every request is signed for --region (docs/aws-cli-options.md).
    .option("source-region", { type: "string", describe: "S3→S3: the source bucket's region (accepted for aws-cli scripts; s3x signs every request for --region)", group: "Transfer:" });
}

/** --copy-threshold, checked against S3's CopyObject limit (for cp and cp -r alike: one rule, one message). */
export function checkCopyThreshold(args: { "copy-threshold": string }): number {
  const threshold = parseSize(args["copy-threshold"]);
  if (threshold > MAX_SINGLE_COPY_SIZE) throw new UsageError("--copy-threshold cannot exceed 5GiB (S3's CopyObject limit)");
  return threshold;
}

/** --multipart-threshold, checked against S3's single PUT limit. */
export function checkThreshold(args: CpArgs): number {
  const threshold = parseSize(args["multipart-threshold"]);
  if (threshold > MAX_SINGLE_COPY_SIZE) throw new UsageError("--multipart-threshold cannot exceed 5GiB (S3's single PUT limit)");
  return threshold;
}
