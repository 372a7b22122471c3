import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Argv } from "yargs";
import { UsageError, type Location } from "../plan/location.js";
import { CANNED_ACLS, declareOptions, type OptionName } from "./option-table.js";
import type { GrantPermission, RequestSettings, SseCustomerKey, StorageSettings } from "../engine/connection.js";

/**
 * aws-cli's options for what objects carry (headers, ACL, encryption) and
 * for requester-pays buckets, on every command that writes objects (cp, mv,
 * sync). Parsed and checked here, before anything is sent.
 */
export interface ObjectOptionArgs {
  "content-type"?: string;
  "storage-class"?: string;
  metadata?: string;
  "metadata-directive"?: string;
  "copy-props"?: string;
  acl?: string;
  "cache-control"?: string;
  "content-encoding"?: string;
  "content-disposition"?: string;
  "content-language"?: string;
  expires?: string;
  sse?: string;
  "sse-kms-key-id"?: string;
  "sse-c"?: string;
  "sse-c-key"?: string;
  "sse-c-copy-source"?: string;
  "sse-c-copy-source-key"?: string;
  "request-payer"?: string;
  grants?: string[];
  "website-redirect"?: string;
  "guess-mime-type"?: boolean;
}

const SSE_MODES = ["AES256", "aws:kms", "aws:kms:dsse"];

/** The options of what written objects carry, in their help order. */
export const OBJECT_OPTIONS: readonly OptionName[] = [
  "metadata-directive", "copy-props", "acl", "cache-control", "content-encoding", "content-disposition", "content-language", "expires",
  "sse", "sse-kms-key-id", "sse-c", "sse-c-key", "sse-c-copy-source", "sse-c-copy-source-key", "request-payer", "grants", "website-redirect", "guess-mime-type",
  "force-glacier-transfer", "ignore-glacier-warnings",
];

export function withObjectOptions<T>(y: Argv<T>) {
  return declareOptions(y, OBJECT_OPTIONS);
}

/** --request-payer alone, for the commands that read or delete (ls, rm): aws-cli has it on every s3 command. */
export function withRequestPayerOption<T>(y: Argv<T>, command: "ls" | "rm") {
  return declareOptions(y, ["request-payer"], command);
}

/** The headers of --request-payer for commands without object options. */
export function requestPayerSettings(args: { "request-payer"?: string }): RequestSettings {
  return requestSettings(args);
}

const COPY_PROPS = ["none", "metadata-directive", "default"];

/**
 * What an S3→S3 copy gives its destination, as aws-cli decides it:
 *  - "copy": the source's metadata and headers (directive COPY);
 *  - "replace": only the ones given (REPLACE): --metadata-directive REPLACE,
 *    or --copy-props none;
 *  - "merge": the ones given, and the source's where one is not (REPLACE,
 *    after a HEAD of the source): --copy-props default (the default) or
 *    metadata-directive when any attribute is given.
 * --metadata-directive turns --copy-props off, as in aws-cli. s3x copies no
 * tags, so default and metadata-directive are the same here; --storage-class
 * alone also merges (aws-cli sends it with COPY: the same object results).
 */
export function copyAttributeMode(args: ObjectOptionArgs): "copy" | "replace" | "merge" {
  const props = args["copy-props"];
  if (props !== undefined && !COPY_PROPS.includes(props)) throw new UsageError(`--copy-props must be ${COPY_PROPS.join(", ")}, got "${props}"`);
  const directive = args["metadata-directive"];
  if (directive !== undefined) {
    const upper = directive.toUpperCase();
    if (upper !== "COPY" && upper !== "REPLACE") throw new UsageError(`--metadata-directive must be COPY or REPLACE, got "${directive}"`);
    return upper === "REPLACE" ? "replace" : "copy";
  }
  if (props === "none") return "replace";
  const given: (keyof ObjectOptionArgs)[] = ["content-type", "storage-class", "metadata", "cache-control", "content-encoding", "content-disposition", "content-language", "expires"];
  return given.some((name) => args[name] !== undefined) ? "merge" : "copy";
}

/** The header attributes of --cache-control … --expires, checked. */
export function headerAttributes(args: ObjectOptionArgs): { cacheControl?: string; contentEncoding?: string; contentDisposition?: string; contentLanguage?: string; expires?: Date } {
  let expires: Date | undefined;
  if (args.expires !== undefined) {
    expires = new Date(args.expires);
    if (Number.isNaN(expires.getTime())) throw new UsageError(`--expires "${args.expires}" is not a date (e.g. 2027-01-01T00:00:00Z)`);
  }
  return {
    cacheControl: args["cache-control"],
    contentEncoding: args["content-encoding"],
    contentDisposition: args["content-disposition"],
    contentLanguage: args["content-language"],
    expires,
  };
}

/** --acl, --sse and --sse-kms-key-id, checked. */
export function storageSettings(args: ObjectOptionArgs): StorageSettings {
  if (args.acl !== undefined && !CANNED_ACLS.includes(args.acl)) throw new UsageError(`--acl must be one of ${CANNED_ACLS.join(", ")}, got "${args.acl}"`);
  if (args.sse !== undefined && !SSE_MODES.includes(args.sse)) throw new UsageError(`--sse must be AES256 or aws:kms, got "${args.sse}"`);
  if (args["sse-kms-key-id"] !== undefined && !args.sse?.startsWith("aws:kms")) throw new UsageError("--sse-kms-key-id goes with --sse aws:kms");
  if (args.sse !== undefined && args["sse-c"] !== undefined) throw new UsageError("--sse and --sse-c cannot be used together");
  return { acl: args.acl, grants: grantsOf(args.grants), sse: args.sse, sseKmsKeyId: args["sse-kms-key-id"], websiteRedirect: args["website-redirect"] };
}

const GRANT_PERMISSIONS: readonly GrantPermission[] = ["read", "readacl", "writeacl", "full"];

/** --grants read=uri=… full=id=…: as aws-cli, a later grant of the same permission replaces an earlier one. */
function grantsOf(grants: string[] | undefined): StorageSettings["grants"] {
  if (grants === undefined) return undefined;
  const headers: NonNullable<StorageSettings["grants"]> = {};
  for (const grant of grants) {
    const at = grant.indexOf("=");
    if (at <= 0) throw new UsageError(`--grants "${grant}": grants should be of the form permission=principal`);
    const permission = grant.slice(0, at) as GrantPermission;
    if (!GRANT_PERMISSIONS.includes(permission)) throw new UsageError(`--grants "${grant}": permission must be one of: read|readacl|writeacl|full`);
    headers[permission] = grant.slice(at + 1);
  }
  return headers;
}

/**
 * --request-payer and the SSE-C keys, for the connection to send on the
 * requests concerned. A copy reads its source with the copy-source key;
 * other commands read and write with --sse-c-key.
 */
export function requestSettings(args: ObjectOptionArgs, source?: Location, dest?: Location): RequestSettings {
  const payer = args["request-payer"];
  if (payer !== undefined && payer !== "requester") throw new UsageError(`--request-payer must be requester, got "${payer}"`);
  const key = customerKey(args["sse-c"], args["sse-c-key"], "--sse-c");
  const copySource = customerKey(args["sse-c-copy-source"], args["sse-c-copy-source-key"], "--sse-c-copy-source");
  const copying = source?.kind === "s3" && dest?.kind === "s3";
  if (copySource && !copying) throw new UsageError("--sse-c-copy-source goes with S3→S3 copies");
  const sseCustomer = key || copySource ? { write: key, read: copying ? copySource : key, copySource } : undefined;
  return { requestPayer: payer === "requester" ? "requester" : undefined, sseCustomer };
}

function customerKey(algorithm: string | undefined, keyText: string | undefined, option: string): SseCustomerKey | undefined {
  if (algorithm === undefined && keyText === undefined) return undefined;
  if (algorithm !== undefined && algorithm !== "AES256") throw new UsageError(`${option} must be AES256, got "${algorithm}"`);
  if (keyText === undefined) throw new UsageError(`${option} needs ${option}-key`);
  if (algorithm === undefined) throw new UsageError(`${option}-key goes with ${option} AES256`);
  const key = keyText.startsWith("fileb://") ? readKeyFile(keyText.slice("fileb://".length), option) : Buffer.from(keyText, "utf8");
  if (key.length !== 32) throw new UsageError(`${option}-key must be 32 bytes (AES-256), got ${key.length}`);
  return { algorithm: "AES256", keyBase64: key.toString("base64"), keyMd5Base64: createHash("md5").update(key).digest("base64") };
}

function readKeyFile(path: string, option: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UsageError(`${option}-key ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** Checks every object option at once, before anything is sent. */
export function checkObjectOptions(args: ObjectOptionArgs): void {
  copyAttributeMode(args);
  headerAttributes(args);
  storageSettings(args);
}
