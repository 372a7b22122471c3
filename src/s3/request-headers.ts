import type { S3Client } from "./sdk.js";

/**
 * Headers that go with every request of a kind, whatever the object:
 * x-amz-request-payer (--request-payer requester: every request) and the
 * SSE-C key (--sse-c-key, --sse-c-copy-source-key), which S3 needs on each
 * request that reads or writes an object stored with a customer key — the
 * PUT, CreateMultipartUpload, every UploadPart, the GETs and HEADs, and the
 * copy source's key on CopyObject and UploadPartCopy. Added to the SDK's
 * requests by a middleware before signing, and to s3x's own (s3/request.ts)
 * through `extraHeaders`.
 */

/** An SSE-C key as S3's headers carry it. */
export interface SseCustomerKey {
  algorithm: "AES256";
  /** The 32-byte key, base64. */
  keyBase64: string;
  /** MD5 of the key, base64. */
  keyMd5Base64: string;
}

export interface RequestSettings {
  requestPayer?: "requester";
  /** The key of objects written; of objects read (GET, HEAD); of a copy's source. */
  sseCustomer?: { write?: SseCustomerKey; read?: SseCustomerKey; copySource?: SseCustomerKey };
}

/** What a request does to an object, as far as SSE-C is concerned. */
export type RequestKind = "read" | "write" | "copy" | "other";

const KIND_OF_COMMAND: Record<string, RequestKind> = {
  GetObjectCommand: "read",
  HeadObjectCommand: "read",
  PutObjectCommand: "write",
  CreateMultipartUploadCommand: "write",
  UploadPartCommand: "write",
  CopyObjectCommand: "copy",
  UploadPartCopyCommand: "copy",
};

const settingsOf = new WeakMap<S3Client, RequestSettings>();

function customerKeyHeaders(key: SseCustomerKey | undefined, prefix: string, into: Record<string, string>): void {
  if (!key) return;
  into[`${prefix}server-side-encryption-customer-algorithm`] = key.algorithm;
  into[`${prefix}server-side-encryption-customer-key`] = key.keyBase64;
  into[`${prefix}server-side-encryption-customer-key-md5`] = key.keyMd5Base64;
}

/** The headers a request of `kind` carries under `settings`. */
export function headersFor(settings: RequestSettings, kind: RequestKind): Record<string, string> {
  const headers: Record<string, string> = {};
  if (settings.requestPayer) headers["x-amz-request-payer"] = settings.requestPayer;
  const sse = settings.sseCustomer;
  if (sse && kind === "read") customerKeyHeaders(sse.read, "x-amz-", headers);
  if (sse && (kind === "write" || kind === "copy")) customerKeyHeaders(sse.write, "x-amz-", headers);
  if (sse && kind === "copy") customerKeyHeaders(sse.copySource, "x-amz-copy-source-", headers);
  return headers;
}

/** The extra headers for one of s3x's own requests through `client`. */
export function extraHeaders(client: S3Client, kind: RequestKind): Record<string, string> | undefined {
  const settings = settingsOf.get(client);
  return settings ? headersFor(settings, kind) : undefined;
}

/** Adds the settings' headers to every SDK request of `client` (and remembers them for direct ones). */
export function installRequestSettings(client: S3Client, settings: RequestSettings): void {
  if (!settings.requestPayer && !settings.sseCustomer) return;
  settingsOf.set(client, settings);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string> } | undefined;
      if (request?.headers) Object.assign(request.headers, headersFor(settings, KIND_OF_COMMAND[context.commandName ?? ""] ?? "other"));
      return next(args);
    },
    { step: "build", name: "s3xRequestSettings" },
  );
}
