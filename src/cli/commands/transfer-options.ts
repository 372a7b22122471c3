import type { Argv } from "yargs";
import { UsageError, type Location } from "../../plan/location.js";
import { MAX_SINGLE_COPY_SIZE, parseSize, uploadPartSize } from "../../plan/parts.js";
import { withCommonOptions, type CommonArgs } from "../options.js";
import { withObjectOptions, type ObjectOptionArgs } from "../object-options.js";
import { declareOptions, declarePositional, type OptionName } from "../option-table.js";

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
  return declareOptions(y, ["include", "exclude", "dryrun", "follow-symlinks"]);
}

/** The options of cp and mv (mv is cp, then each source removed). */
export function copyCommandOptions(y: Argv) {
  return declareOptions(withSetOptions(transferOptions(withCommonOptions(y))), ["recursive"]);
}

/** The options of every command that writes objects, in their help order. */
const TRANSFER_OPTIONS: readonly OptionName[] = [
  "part-size", "multipart-threshold", "content-type", "storage-class", "metadata", "copy-threshold", "keep-failed-uploads",
  "checksum-algorithm", "verify-etag", "resume", "expected-size", "source-region",
];

/** Options of every command that writes objects (cp, mv, sync). */
export function transferOptions<T>(y: Argv<T>) {
  // Required by each command's own usage string (`cp --from FILE DEST` takes one).
  const withPaths = declarePositional(declarePositional(withObjectOptions(y), "source"), "destination");
  return declareOptions(withPaths, TRANSFER_OPTIONS);
}

/** --copy-threshold, checked against S3's CopyObject limit (for cp and cp -r alike: one rule, one message). */
export function checkCopyThreshold(args: { "copy-threshold": string }): number {
  const threshold = parseSize(args["copy-threshold"]);
  if (threshold > MAX_SINGLE_COPY_SIZE) throw new UsageError("--copy-threshold cannot exceed 5GiB (S3's CopyObject limit)");
  return threshold;
}

/** The sizes a transfer's objects are cut by, parsed and checked once per run and handed down as numbers. */
export interface TransferSizes {
  /** --part-size: undefined leaves the engine its default (raised to fit 10,000 parts). */
  partSize?: number;
  /** --multipart-threshold. */
  multipartThreshold: number;
}

/** --part-size and --multipart-threshold, checked against S3's limits before any work. */
export function transferSizesOf(args: { "part-size"?: string; "multipart-threshold": string }, dest: Location): TransferSizes {
  const partSize = args["part-size"] !== undefined ? parseSize(args["part-size"]) : undefined;
  const multipartThreshold = parseSize(args["multipart-threshold"]);
  if (multipartThreshold > MAX_SINGLE_COPY_SIZE) throw new UsageError("--multipart-threshold cannot exceed 5GiB (S3's single PUT limit)");
  if (partSize !== undefined && dest.kind === "s3") uploadPartSize(0, partSize); // S3's part limits
  return { partSize, multipartThreshold };
}
