/**
 * Methods the raw path may send again on a fresh connection after a stale
 * keep-alive one failed before any answer: idempotent ones only. A POST
 * (CreateMultipartUpload) might have reached the server; its retry is the
 * engine's decision.
 */
const RESENDABLE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "DELETE"]);

/** Whether a request that failed on a reused connection before any byte of answer may go out once more, on a new one. */
export function mayResend(method: string): boolean {
  return RESENDABLE_METHODS.has(method);
}
