/**
 * How an object is stored and who may read it (--acl, --grants, --sse,
 * --sse-kms-key-id, --website-redirect): set on every object s3x writes, a
 * copy too whatever its metadata directive (as aws-cli).
 */
export interface StorageSettings {
  acl?: string;
  /** Explicit grants (--grants PERMISSION=GRANTEE): the grantee text as the x-amz-grant-* header carries it. */
  grants?: Partial<Record<GrantPermission, string>>;
  /** AES256 or aws:kms (x-amz-server-side-encryption). */
  sse?: string;
  sseKmsKeyId?: string;
  /** x-amz-website-redirect-location. */
  websiteRedirect?: string;
}

/** aws-cli's --grants permissions. */
export type GrantPermission = "read" | "readacl" | "writeacl" | "full";

const GRANT_HEADERS: Record<GrantPermission, string> = {
  read: "x-amz-grant-read",
  readacl: "x-amz-grant-read-acp",
  writeacl: "x-amz-grant-write-acp",
  full: "x-amz-grant-full-control",
};

/** What s3x sets on objects it writes. */
export interface ObjectAttributes extends StorageSettings {
  contentType?: string;
  storageClass?: string;
  metadata?: Record<string, string>;
  cacheControl?: string;
  contentEncoding?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  expires?: Date;
}

/** An object's attributes as the headers of a PUT, CreateMultipartUpload or copy. */
export function attributeHeaders(attrs: ObjectAttributes): Record<string, string> {
  const headers: Record<string, string> = storageHeaders(attrs);
  if (attrs.contentType !== undefined) headers["content-type"] = attrs.contentType;
  if (attrs.storageClass !== undefined) headers["x-amz-storage-class"] = attrs.storageClass;
  if (attrs.cacheControl !== undefined) headers["cache-control"] = attrs.cacheControl;
  if (attrs.contentEncoding !== undefined) headers["content-encoding"] = attrs.contentEncoding;
  if (attrs.contentDisposition !== undefined) headers["content-disposition"] = attrs.contentDisposition;
  if (attrs.contentLanguage !== undefined) headers["content-language"] = attrs.contentLanguage;
  if (attrs.expires !== undefined) headers.expires = attrs.expires.toUTCString();
  for (const [name, value] of Object.entries(attrs.metadata ?? {})) headers[`x-amz-meta-${name.toLowerCase()}`] = value;
  return headers;
}

/** The headers of StorageSettings. */
export function storageHeaders(settings: StorageSettings): Record<string, string> {
  const headers: Record<string, string> = {};
  if (settings.acl !== undefined) headers["x-amz-acl"] = settings.acl;
  if (settings.sse !== undefined) headers["x-amz-server-side-encryption"] = settings.sse;
  if (settings.sseKmsKeyId !== undefined) headers["x-amz-server-side-encryption-aws-kms-key-id"] = settings.sseKmsKeyId;
  for (const [permission, grantee] of Object.entries(settings.grants ?? {})) headers[GRANT_HEADERS[permission as GrantPermission]] = grantee;
  if (settings.websiteRedirect !== undefined) headers["x-amz-website-redirect-location"] = settings.websiteRedirect;
  return headers;
}
