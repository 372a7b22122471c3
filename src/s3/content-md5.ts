import { createHash } from "node:crypto";
import type { S3Client, ServiceInputTypes, ServiceOutputTypes } from "@aws-sdk/client-s3";
import type { FinalizeRequestMiddleware } from "@smithy/types";

/**
 * Content-MD5 for servers that demand it. The SDK checksums DeleteObjects
 * with x-amz-checksum-crc32 (S3 requires *a* checksum there); some
 * S3-compatible stores accept only Content-MD5 and refuse the request.
 * s3x sends as the SDK does, and once a server refuses for that reason,
 * sends Content-MD5 instead for the rest of the run (s3/list.ts).
 */
const WANTS_CONTENT_MD5 = Symbol("s3x.contentMd5");

type Marked = { [WANTS_CONTENT_MD5]?: boolean };

/** Marks a command's input so its request carries Content-MD5 instead of the SDK's checksum header. */
export function withContentMd5<T extends object>(input: T): T {
  Object.defineProperty(input, WANTS_CONTENT_MD5, { value: true, enumerable: true, configurable: true });
  return input;
}

/** Whether an error is a server's demand for Content-MD5. */
export function demandsContentMd5(err: unknown): boolean {
  const e = err as { name?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const code = e?.Code ?? e?.name;
  if (code === "MissingContentMD5") return true;
  return (code === "InvalidRequest" || e?.$metadata?.httpStatusCode === 400) && /content-md5/i.test(e?.message ?? "");
}

export function installContentMd5(client: S3Client): void {
  const middleware: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => async (args) => {
    const request = args.request as { headers?: Record<string, string>; body?: unknown } | undefined;
    if ((args.input as Marked)[WANTS_CONTENT_MD5] && request?.headers) {
      const body = request.body;
      const bytes = typeof body === "string" ? Buffer.from(body) : body instanceof Uint8Array ? body : Buffer.alloc(0);
      for (const name of Object.keys(request.headers)) {
        if (/^x-amz-(checksum-|sdk-checksum-algorithm)/i.test(name)) delete request.headers[name];
      }
      request.headers["content-md5"] = createHash("md5").update(bytes).digest("base64");
    }
    return next(args);
  };
  // Before signing, so the header is signed like the others.
  client.middlewareStack.addRelativeTo(middleware, { relation: "before", toMiddleware: "httpSigningMiddleware", name: "s3xContentMd5" });
}
