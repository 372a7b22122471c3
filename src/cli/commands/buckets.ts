import type { RunOptions } from "../resolve-options.js";
import type { Argv } from "yargs";
import { parseLocation, UsageError } from "../../plan/location.js";
import { deleteUnder } from "../../engine/delete.js";
import { abortUploadsUnder } from "../../engine/uploads.js";
import { makeBucket, removeBucket } from "../../engine/single-requests.js";
import { withCommonOptions, type CommonArgs } from "../options.js";
import { DeletionReport } from "../deletions.js";
import { errorCode } from "../errors.js";
import { Session } from "../session.js";
import { declareOptions, declarePositional } from "../option-table.js";

export interface MbArgs extends CommonArgs {
  bucket: string;
}

export interface RbArgs extends CommonArgs {
  bucket: string;
  force: boolean;
}

export function mbBuilder(y: Argv) {
  return declarePositional(withCommonOptions(y), "bucket", "mb")
    .example("s3x mb s3://my-bucket", "create a bucket")
    .example("s3x mb s3://my-bucket --region eu-west-1", "create it in another region");
}

export function rbBuilder(y: Argv) {
  return declareOptions(declarePositional(withCommonOptions(y), "bucket", "rb"), ["force"], "rb")
    .example("s3x rb s3://my-bucket", "delete an empty bucket")
    .example("s3x rb s3://my-bucket --force", "delete every object in it, then the bucket")
    .group([], "Options:");
}

/** The bucket an `mb`/`rb` argument names: s3://bucket, with nothing after it but one "/". */
function bucketOf(command: string, arg: string): string {
  const loc = parseLocation(arg);
  if (loc.kind !== "s3") throw new UsageError(`${command} needs an s3://bucket URL, got "${arg}"`);
  if (loc.key !== "" && loc.key !== "/") throw new UsageError(`${command} takes a bucket, not an object: "${arg}" (did you mean s3://${loc.bucket}?)`);
  return loc.bucket;
}

/** `s3x mb s3://bucket`: creates a bucket, as `aws s3 mb`. */
export async function runMb(args: MbArgs, run: RunOptions): Promise<number> {
  const bucket = bucketOf("mb", args.bucket);
  const session = Session.open(run, { progressAllowed: false });
  const ctx = session.context;
  try {
    await makeBucket(ctx, bucket).catch((err: unknown) => {
      const code = errorCode(err);
      if (code === "BucketAlreadyOwnedByYou") throw new Error(`s3://${bucket} already exists (and is yours)`);
      if (code === "BucketAlreadyExists") throw new Error(`s3://${bucket} already exists: bucket names are shared by every account, choose another`);
      throw err;
    });
    await announce(session, "make_bucket", bucket);
    return 0;
  } finally {
    await session.close();
  }
}

/**
 * `s3x rb s3://bucket`: deletes an empty bucket, as `aws s3 rb`. With
 * --force it first deletes every object (one line each, as rm -r) and aborts
 * in-progress multipart uploads; if any of that fails the bucket is kept.
 */
export async function runRb(args: RbArgs, run: RunOptions): Promise<number> {
  const bucket = bucketOf("rb", args.bucket);
  const session = Session.open(run, { progressAllowed: false });
  const ctx = session.context;
  try {
    if (args.force) {
      const deletions = new DeletionReport(session);
      await deleteUnder(ctx, bucket, "", { selected: () => true, dryrun: false }, deletions.add);
      await abortUploadsUnder(ctx, bucket, "", { startedBefore: Number.POSITIVE_INFINITY, dryrun: false }, deletions.add);
      await session.throwIfStopped();
      if (deletions.failed > 0) throw new Error(`s3://${bucket} kept: ${deletions.failed} of its objects or uploads could not be deleted`);
    }
    await removeBucket(ctx, bucket).catch((err: unknown) => {
      if (errorCode(err) === "BucketNotEmpty") throw new Error(`s3://${bucket} is not empty: delete its objects first, or use rb --force`);
      throw err;
    });
    await announce(session, "remove_bucket", bucket);
    return 0;
  } finally {
    await session.close();
  }
}

/** The line aws-cli prints for a bucket made or removed (a JSON line with --json, nothing with --quiet or --only-show-errors). */
async function announce(session: Session, action: "make_bucket" | "remove_bucket", bucket: string): Promise<void> {
  if (session.printer.mode === "json") await session.stdout.write(JSON.stringify({ action, bucket, status: "ok" }) + "\n");
  else if (session.printer.mode === "normal") await session.stdout.write(`${action}: ${bucket}\n`);
}
