import { PlanError } from "../plan/parts.js";
import { DestinationBusyError } from "../engine/locks/exclusive-lock.js";
import { ChecksumIgnoredError } from "../engine/integrity/checksum-support.js";
import { LostCompletionError } from "../engine/multipart-commit.js";
import { UsageError } from "../plan/location.js";
import { RequestError } from "../engine/retry.js";
import { CredentialSourceError, describeFailure } from "../engine/connection.js";
import { ChecksumMismatchError } from "../engine/download.js";

/** Exit statuses, documented in the README. */
export const ExitCode = {
  ok: 0,
  /** A transfer failed: S3, network or local I/O error. */
  failed: 1,
  /** The command line was wrong: unknown option, malformed URL, impossible part size. */
  usage: 2,
  /**
   * Done, but some source files were skipped with a warning (a named pipe, a
   * dangling symlink). aws-cli says this with 2, which s3x has always used
   * for usage errors (aws-cli: 252); scripts need the two apart.
   */
  skipped: 3,
  /** Interrupted by SIGINT (Ctrl-C); in-flight uploads were aborted and temp files removed. */
  interrupted: 130,
  /** The reader of stdout went away (e.g. `| head`), as for any Unix tool killed by SIGPIPE. */
  brokenPipe: 141,
  /** Terminated by SIGTERM, cleaned up like SIGINT. */
  terminated: 143,
} as const;

/** Raised (as the abort reason) when the user interrupts s3x. */
export class InterruptError extends Error {
  constructor(readonly signalName: "SIGINT" | "SIGTERM") {
    super(`interrupted by ${signalName}`);
  }
}

const LOCAL_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOSPC: "no space left on device (disk full)",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EEXIST: "already exists",
};

export interface ReportedError {
  message: string;
  exitCode: number;
}

/** One line for the user, and the exit status, for any error s3x can meet. */
export function reportError(err: unknown): ReportedError {
  const reported = describeError(err);
  // Some SDK messages run on over several lines ("Deserialization error: …"): the first says it.
  return { ...reported, message: firstLine(reported.message) };
}

/** A file system call's failure that LOCAL_ERRORS explains. */
function isLocalFailure(err: unknown): boolean {
  const errno = err as NodeJS.ErrnoException | undefined;
  const network = errno?.syscall === "connect" || errno?.syscall === "getaddrinfo" || errno?.syscall?.startsWith("query");
  return typeof errno?.code === "string" && Boolean(errno.syscall) && !network && LOCAL_ERRORS[errno.code] !== undefined;
}

function describeError(err: unknown): ReportedError {
  if (err instanceof InterruptError) return { message: err.message, exitCode: err.signalName === "SIGINT" ? ExitCode.interrupted : ExitCode.terminated };
  if (isBrokenPipe(err)) return { message: "", exitCode: ExitCode.brokenPipe };
  if (err instanceof UsageError || err instanceof PlanError) return { message: err.message, exitCode: ExitCode.usage };
  if (err instanceof RangeError && /memory budget/.test(err.message)) return { message: err.message, exitCode: ExitCode.usage };
  if (err instanceof RequestError && isCredentialsError(err.cause)) return describeError(err.cause);
  // A local write failing while a GET's body arrived (ENOSPC on a full disk): the local error is the news, not the GET.
  if (err instanceof RequestError && isLocalFailure(err.cause)) return describeError(err.cause);
  if (err instanceof RequestError || err instanceof ChecksumMismatchError) return { message: err.message, exitCode: ExitCode.failed };
  // Refusals that explain themselves (engine/locks/exclusive-lock, integrity/checksum-support, multipart-commit).
  if (err instanceof DestinationBusyError || err instanceof ChecksumIgnoredError || err instanceof LostCompletionError) return { message: err.message, exitCode: ExitCode.failed };
  const errno = err as NodeJS.ErrnoException;
  // A download meeting a directory where its file goes (engine/sinks/file-sink): the message says it all.
  if (errno?.code === "S3X_PATH_CLASH") return { message: errno.message, exitCode: ExitCode.failed };
  if (errno && typeof errno.code === "string" && errno.syscall && LOCAL_ERRORS[errno.code]) {
    const path = errno.path ? `${errno.path}: ` : "";
    return { message: `${path}${LOCAL_ERRORS[errno.code]}`, exitCode: ExitCode.failed };
  }
  // A profile's own credential provider failed (s3/credentials.ts): its message names the profile, the provider and the cause.
  if (err instanceof CredentialSourceError) return { message: err.message, exitCode: ExitCode.failed };
  if (isCredentialsError(errno)) {
    // aws-cli's words and how to give credentials; the SDK's message for "none anywhere" says neither.
    const detail = /could not load credentials from any providers/i.test(errno.message) ? "" : ` (${firstLine(errno.message)})`;
    return {
      message: `Unable to locate credentials${detail}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, name a profile that has them (--profile, $AWS_PROFILE), or use --no-sign-request for public buckets`,
      exitCode: ExitCode.failed,
    };
  }
  const failure = describeFailure(err);
  return { message: failure.message, exitCode: ExitCode.failed };
}

/**
 * Failures every other object of a recursive run would meet as well (the
 * bucket is not there, the access key is unknown): the run stops at the
 * first and reports it once, instead of one line per object.
 */
export function endsTheRun(err: unknown): boolean {
  const code = errorCode(err);
  return code === "NoSuchBucket" || code === "InvalidAccessKeyId";
}

/** The S3 (or network) error code of a failure, whether retried (RequestError) or not. */
export function errorCode(err: unknown): string | undefined {
  return err instanceof RequestError ? err.failure.code : describeFailure(err).code;
}

function isCredentialsError(err: unknown): err is Error {
  return (err as Error | undefined)?.name === "CredentialsProviderError" || err instanceof CredentialSourceError;
}

export function isBrokenPipe(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === "EPIPE";
}

function firstLine(text: string): string {
  return text.split("\n")[0];
}
