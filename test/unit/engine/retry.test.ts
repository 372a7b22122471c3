import assert from "node:assert/strict";
import { backoffDelay, isRetryable, RequestError, withRetries, DEFAULT_RETRY_POLICY } from "../../../src/engine/retry.js";
import { describeFailure } from "../../../src/s3/errors.js";

function s3Error(name: string, status: number): Error {
  return Object.assign(new Error(""), { name, $metadata: { httpStatusCode: status }, $fault: status >= 500 ? "server" : "client" });
}

function netError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

describe("engine/retry", () => {
  describe("isRetryable", () => {
    it("retries server errors and throttling", () => {
      assert.ok(isRetryable(describeFailure(s3Error("InternalError", 500))));
      assert.ok(isRetryable(describeFailure(s3Error("SlowDown", 503))));
      assert.ok(isRetryable(describeFailure(s3Error("ServiceUnavailable", 503))));
    });

    it("retries the transient S3 codes whatever the status (also in a 200 body)", () => {
      for (const code of ["SlowDown", "InternalError", "RequestTimeout", "RequestTimeTooSkewed"]) {
        assert.ok(isRetryable(describeFailure(s3Error(code, 200))), code);
        assert.ok(isRetryable(describeFailure(s3Error(code, 400))), code);
      }
    });

    it("retries resets, refused connects and timeouts", () => {
      for (const code of ["ECONNRESET", "ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_SOCKET"]) {
        assert.ok(isRetryable(describeFailure(netError(code))), code);
      }
    });

    it("never retries other 4xx", () => {
      for (const [name, status] of [["NoSuchKey", 404], ["AccessDenied", 403], ["NoSuchBucket", 404], ["PreconditionFailed", 412], ["InvalidRange", 416], ["BadDigest", 400]] as const) {
        assert.equal(isRetryable(describeFailure(s3Error(name, status))), false, name);
      }
    });

    it("does not retry local errors", () => {
      assert.equal(isRetryable(describeFailure(netError("ENOSPC"))), false);
    });
  });

  describe("backoffDelay", () => {
    it("is full jitter in [0, base × 2^n], capped", () => {
      const policy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 20_000 };
      assert.equal(backoffDelay(0, policy, () => 0), 0);
      assert.equal(backoffDelay(0, policy, () => 0.999999), 499);
      assert.equal(backoffDelay(3, policy, () => 0.5), 2000);
      assert.equal(backoffDelay(10, policy, () => 0.999999), 19_999);
      for (let n = 0; n < 12; n++) {
        const d = backoffDelay(n, policy);
        assert.ok(d >= 0 && d <= Math.min(20_000, 500 * 2 ** n));
      }
    });
  });

  describe("withRetries", () => {
    const fast = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 2 };

    it("retries a retryable failure until it succeeds", async () => {
      let calls = 0;
      const result = await withRetries("op", fast, async () => {
        if (++calls < 3) throw s3Error("SlowDown", 503);
        return "ok";
      });
      assert.equal(result, "ok");
      assert.equal(calls, 3);
    });

    it("gives up after maxAttempts with a message naming the operation and attempts", async () => {
      let calls = 0;
      await assert.rejects(
        withRetries("GET s3://b/k", fast, async () => {
          calls++;
          throw Object.assign(netError("ECONNRESET"), { address: "127.0.0.3" });
        }),
        (err: Error) => err instanceof RequestError && /^GET s3:\/\/b\/k: ECONNRESET: connection reset via 127\.0\.0\.3 after 5 attempts$/.test(err.message),
      );
      assert.equal(calls, 5);
    });

    it("fails at once on a non-retryable error", async () => {
      let calls = 0;
      await assert.rejects(
        withRetries("GET s3://b/k", fast, async () => {
          calls++;
          throw s3Error("NoSuchKey", 404);
        }),
        /NoSuchKey: the object does not exist \(HTTP 404\)/,
      );
      assert.equal(calls, 1);
    });

    it("stops waiting when cancelled", async () => {
      const controller = new AbortController();
      const slow = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 60_000, maxDelayMs: 60_000 };
      const started = Date.now();
      setTimeout(() => controller.abort(new Error("cancelled")), 20);
      await assert.rejects(
        withRetries("op", slow, async () => {
          throw s3Error("SlowDown", 503);
        }, { signal: controller.signal }),
      );
      // Cancelled during the first 60 s backoff, not after it.
      assert.ok(Date.now() - started < slow.baseDelayMs / 2);
    });
  });
});
