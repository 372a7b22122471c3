/** What one compatibility scenario is made of (see harness.ts for how it runs). */

/**
 * A local file: its text or bytes, and optionally its mtime; or what is not
 * a regular file, which a recursive upload skips with a warning: a named pipe
 * (`{ fifo: true }`) or a symbolic link (`{ symlinkTo }`, dangling when its
 * target does not exist).
 */
export type LocalFile = string | Buffer | { body: string | Buffer; mtime: Date } | { fifo: true } | { symlinkTo: string };

/** An object stored before the commands run. */
export type RemoteObject = string | Buffer | { body: string | Buffer; contentType?: string; metadata?: Record<string, string> };

export interface Scenario {
  name: string;
  /**
   * The commands, run one after another on each side, after the `s3`
   * of aws-cli and as they are for s3x. Placeholders: {b} and {b2} are
   * two buckets of this side (made before), {nb} a bucket name that does
   * not exist, {l} the absolute path of this side's local directory, which
   * is also the commands' working directory.
   */
  steps: string[][];
  /** Files (and, with a trailing "/", empty directories) in the local directory, by relative path. */
  local?: Record<string, LocalFile>;
  /** Objects in {b}, by key. A key ending in "/" with an empty body is a folder marker. */
  remote?: Record<string, RemoteObject>;
  /** Objects in {b2}, by key. */
  remote2?: Record<string, RemoteObject>;
  /** Compare the stdout lines in order (listings); otherwise as sorted sets, since both sides transfer concurrently. */
  ordered?: boolean;
  /** Also compare the objects' ACL grants (--acl). */
  acl?: boolean;
  /** Also require stderr to be empty on both sides or neither (--quiet). */
  stderrEmptiness?: boolean;
  /**
   * Printed lines that differ on purpose, each with its reason (listed in
   * the README): stdout of the steps named here is not compared. Exit
   * codes, objects and files still are.
   */
  stdoutDiffers?: { steps: number[]; reason: string };
  /**
   * Where s3x differs from aws-cli on purpose (each listed in the README's
   * "Differences from aws-cli"): what s3x must do instead, checked as
   * strictly as the rest. Everything not named here is still compared.
   */
  differsOnPurpose?: {
    reason: string;
    /** s3x's exit code for every step where aws-cli's differs (aws-cli's must not be 0 either). */
    s3xExitCode?: number;
    /** Local files (relative path → text) s3x leaves where aws-cli leaves something else. */
    s3xFiles?: Record<string, string>;
    /** Content-Type s3x stores for these keys of {b} where aws-cli stores another. */
    s3xContentTypes?: Record<string, string>;
  };
}
