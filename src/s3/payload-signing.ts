import type { S3Client } from "@aws-sdk/client-s3";

/**
 * Whether an upload body's SHA-256 goes into the SigV4 signature
 * (--payload-signing). Hashing costs ~0.6 CPU-s per GiB uploaded, a third
 * to a half of an upload's client CPU, so "auto" hashes only where nothing
 * else protects the bytes:
 *  - over TLS, never (the connection protects them: UNSIGNED-PAYLOAD);
 *  - over plain HTTP, unless the request carries a checksum the server has
 *    shown it verifies (it echoed one: engine/integrity/checksum-support):
 *    then the CRC is the end-to-end check and the SHA-256 is skipped.
 *    A CRC catches corruption, not a deliberate change on the path: that
 *    takes TLS or "always".
 * "never" sends UNSIGNED-PAYLOAD everywhere, as the CRT always does
 * (aws-cli's payload_signing_enabled = false); "always" hashes over TLS too.
 */
export type PayloadSigning = "auto" | "always" | "never";

/** Whether a data upload over `protocol` is signed with its payload hash. */
export function signsPayloadUnder(mode: PayloadSigning, protocol: string, checksumChecked: boolean): boolean {
  if (mode === "always") return true;
  if (mode === "never") return false;
  return protocol !== "https:" && !checksumChecked;
}

/** Marks an SDK command input whose x-amz-checksum-* the server is known to verify. */
const CHECKSUM_CHECKED = Symbol("s3x.checksumChecked");

export function markChecksumChecked(input: object): void {
  Object.defineProperty(input, CHECKSUM_CHECKED, { value: true, enumerable: true, configurable: true });
}

function checksumCheckedOf(input: unknown): boolean {
  return typeof input === "object" && input !== null && (input as { [CHECKSUM_CHECKED]?: boolean })[CHECKSUM_CHECKED] === true;
}

/** Operations whose bodies are object data, worth not hashing twice. */
const DATA_UPLOADS = new Set(["PutObjectCommand", "UploadPartCommand"]);

/**
 * Applies the policy to the SDK's own data uploads (the direct ones apply it
 * in s3/request.ts): a body not to hash is sent as UNSIGNED-PAYLOAD, which
 * the SDK's signer then signs as that literal instead of hashing the body.
 */
export function signPayloads(client: S3Client, mode: PayloadSigning): void {
  if (mode === "always") return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { protocol?: string; headers?: Record<string, string> } | undefined;
      if (request?.headers && DATA_UPLOADS.has(context.commandName ?? "") && !signsPayloadUnder(mode, request.protocol ?? "http:", checksumCheckedOf(args.input))) {
        request.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
      }
      return next(args);
    },
    { step: "build", name: "s3xUnsignedPayload" },
  );
}
