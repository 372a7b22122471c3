import type { S3Client } from "@aws-sdk/client-s3";

const READS = new Set(["GetObjectCommand", "HeadObjectCommand"]);

/**
 * Asks for stored checksums on every GET and HEAD (x-amz-checksum-mode:
 * ENABLED) without the SDK's own response validation: setting the input's
 * ChecksumMode would make the SDK wrap each body in a JavaScript CRC stream
 * and fail ranged reads it cannot check. s3x checks the combined CRC of its
 * ranges itself (engine/download). Servers that store no checksums ignore
 * the header.
 */
export function requestStoredChecksums(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string> } | undefined;
      if (request?.headers && READS.has(context.commandName ?? "")) request.headers["x-amz-checksum-mode"] = "ENABLED";
      return next(args);
    },
    { step: "build", name: "s3xChecksumMode" },
  );
}
