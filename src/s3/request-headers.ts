/**
 * Headers that go with every request of a kind, whatever the object:
 * x-amz-request-payer (--request-payer requester: every request) and the
 * SSE-C key (--sse-c-key, --sse-c-copy-source-key), which S3 needs on each
 * request that reads or writes an object stored with a customer key — the
 * PUT, CreateMultipartUpload, every UploadPart, the GETs and HEADs, and the
 * copy source's key on CopyObject and UploadPartCopy. Added to every
 * request by s3/request.ts, before signing.
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
