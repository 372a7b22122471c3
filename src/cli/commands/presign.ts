import type { RunOptions } from "../resolve-options.js";
import type { Argv } from "yargs";
import { parseLocation, UsageError } from "../../plan/location.js";
import { MAX_PRESIGN_SECONDS, presignedGetUrl } from "../../engine/single-requests.js";
import { withCommonOptions, type CommonArgs } from "../options.js";
import { Session } from "../session.js";
import { declareOptions, declarePositional } from "../option-table.js";

export interface PresignArgs extends CommonArgs {
  path: string;
  "expires-in": number;
}

export function presignBuilder(y: Argv) {
  return declareOptions(declarePositional(withCommonOptions(y), "path", "presign"), ["expires-in"], "presign")
    .example("s3x presign s3://bucket/report.pdf", "a URL valid for an hour")
    .example("s3x presign s3://bucket/model.bin --expires-in 600", "a URL valid for 10 minutes (for curl on a machine without credentials)")
    .group([], "Options:");
}

/**
 * `s3x presign s3://b/k`: prints a URL anyone can GET the object with until it expires, signed for the
 * bucket's region (one HeadBucket asks it, as aws-cli does: s3/presign.ts).
 * With --no-sign-request, as aws-cli: the object's plain URL (for a public object).
 */
export async function runPresign(args: PresignArgs, run: RunOptions): Promise<number> {
  // aws-cli's presign takes `bucket/key` without the scheme too.
  const loc = parseLocation(/^s3:/i.test(args.path) ? args.path : `s3://${args.path}`);
  if (loc.kind !== "s3" || loc.key === "") throw new UsageError(`presign needs s3://bucket/key, got "${args.path}"`);
  const seconds = args["expires-in"];
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_PRESIGN_SECONDS) throw new UsageError(`--expires-in must be a whole number of seconds from 1 to ${MAX_PRESIGN_SECONDS}, got ${seconds}`);
  const session = Session.open(run, { progressAllowed: false });
  try {
    const url = await presignedGetUrl(session.context, { bucket: loc.bucket, key: loc.key }, seconds, args["sign-request"]);
    await session.stdout.write(url + "\n");
  } finally {
    await session.close();
  }
  return 0;
}
