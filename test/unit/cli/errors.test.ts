import assert from "node:assert/strict";
import { reportError, ExitCode } from "../../../src/cli/errors.js";
import { RequestError } from "../../../src/engine/retry.js";
import { describeFailure } from "../../../src/engine/connection.js";

describe("reportError: a local failure inside a request", () => {
  const inGet = (cause: Error) => new RequestError("GET s3://b/k", describeFailure(cause), 1, cause);

  it("a full disk met while a GET's body was written says so, not the GET", () => {
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", syscall: "write", errno: -28 });
    assert.deepEqual(reportError(inGet(full)), { message: "no space left on device (disk full)", exitCode: ExitCode.failed });
  });

  it("a network failure stays the request's", () => {
    const refused = Object.assign(new Error("connect EACCES 127.0.0.1:9"), { code: "EACCES", syscall: "connect" });
    assert.match(reportError(inGet(refused)).message, /^GET s3:\/\/b\/k/);
  });
});
