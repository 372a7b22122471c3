/** What one compatibility scenario is made of (see harness.ts for how it runs). */

/** A local file: its text or bytes, and optionally its mtime. */
export type LocalFile = string | Buffer | { body: string | Buffer; mtime: Date };

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
}
