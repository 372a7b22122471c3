import type { Argv } from "yargs";
import type { ObjectAttributes } from "../engine/connection.js";
import { UsageError } from "../plan/location.js";
import { copyAttributeMode, headerAttributes, storageSettings, type ObjectOptionArgs } from "./object-options.js";
import { declareOptions, type OptionName } from "./option-table.js";

/**
 * Options every command shares, in aws-cli spelling. They are declared once,
 * before the commands (yargs options are global: every command inherits
 * them, and `s3x --endpoint-url URL ls` works); a command builder calling
 * this again changes nothing, so help lists them once (no `-q, -q`) and
 * after the command's own options (a builder whose options have no group
 * ends with `.group([], "Options:")` to put that group first).
 */
export function withCommonOptions<T>(y: Argv<T>) {
  // getOptions() is yargs's, missing from its type definitions.
  const declared = (y as unknown as { getOptions?: () => { key: Record<string, unknown> } }).getOptions?.().key ?? {};
  if ("endpoint-url" in declared) return y as unknown as ReturnType<typeof declareCommonOptions<T>>;
  return declareCommonOptions(y);
}

/** The shared options, in their help order (the table says what each is: cli/option-table.ts). */
export const COMMON_OPTIONS: readonly OptionName[] = [
  "endpoint-url", "region", "profile", "sign-request", "force-path-style", "payload-signing", "ca-bundle", "verify-ssl", "connect-timeout", "read-timeout", "resolve", "dns-server", "max-attempts",
  "concurrency", "target-throughput", "max-memory", "workers", "page-size", "list-ranges",
  "quiet", "only-show-errors", "progress", "json", "debug",
  "cli-connect-timeout", "cli-read-timeout", "output", "query", "color", "cli-binary-format", "paginate", "cli-pager", "cli-auto-prompt", "use-accelerate-endpoint",
];

function declareCommonOptions<T>(y: Argv<T>) {
  return declareOptions(y, COMMON_OPTIONS);
}

export interface CommonArgs {
  "endpoint-url"?: string;
  region?: string;
  profile?: string;
  "sign-request": boolean;
  "force-path-style"?: boolean;
  "payload-signing"?: string;
  "ca-bundle"?: string;
  "verify-ssl": boolean;
  "connect-timeout": number;
  "read-timeout": number;
  "cli-connect-timeout"?: number;
  "cli-read-timeout"?: number;
  "use-accelerate-endpoint"?: boolean;
  "max-attempts": number;
  resolve?: string[];
  "dns-server"?: string[];
  concurrency?: number;
  "target-throughput": number;
  "max-memory": string;
  "page-size"?: number;
  "list-ranges": number;
  workers?: number;
  quiet: boolean;
  "only-show-errors"?: boolean;
  progress: boolean;
  json: boolean;
  debug?: boolean;
}

/** The options that set what uploaded objects carry. */
export type AttributeArgs = ObjectOptionArgs;

/** The Content-Type of an object whose type is neither given nor known from its name. */
const DEFAULT_CONTENT_TYPE = "application/octet-stream";

/** What a file or key adds to the attributes the command line gives: its guessed Content-Type and, for a file, its mtime. */
export type AttributesFor = (fileName?: string, mtimeMs?: number) => Promise<ObjectAttributes>;

/**
 * What s3x sets on an object it writes: the given Content-Type or one
 * guessed from the file name (else application/octet-stream, sent on every
 * path: a server may otherwise store the type of a multipart upload's
 * Complete request, application/xml), the storage class, the headers, ACL
 * and encryption given, the user's metadata and, when known, the file's
 * mtime (as rclone does, so it survives S3's upload time).
 *
 * The options are parsed and checked once per run, at the first object
 * written (a download never reads --metadata), not once per file.
 */
export function objectAttributesOf(args: AttributeArgs): AttributesFor {
  let given: ObjectAttributes | undefined;
  return async (fileName, mtimeMs) => {
    given ??= attributesGiven(args);
    const guessed = fileName && args["content-type"] === undefined && args["guess-mime-type"] !== false ? await guessContentType(fileName) : false;
    const { metadata } = given;
    return {
      ...given,
      contentType: given.contentType ?? (guessed || DEFAULT_CONTENT_TYPE),
      metadata: mtimeMs === undefined ? (metadata && { ...metadata }) : { ...metadata, mtime: (mtimeMs / 1000).toFixed(3) },
    };
  };
}

/** The attributes on the command line alone, parsed and checked. */
function attributesGiven(args: AttributeArgs): ObjectAttributes {
  return {
    ...storageSettings(args),
    ...headerAttributes(args),
    contentType: args["content-type"],
    storageClass: args["storage-class"],
    metadata: parseMetadata(args.metadata),
  };
}

/**
 * The attributes of an S3→S3 copy to a key, by copyAttributeMode: none (the
 * source's are copied), every one objectAttributesOf gives (replaced), or only
 * those on the command line, the source's filling in the rest (merged: no
 * Content-Type is guessed from the key then, as aws-cli guesses none for a copy).
 * Parsed once per run, like objectAttributesOf.
 */
export function copyAttributesOf(args: AttributeArgs): (key: string) => Promise<{ attributes?: ObjectAttributes; mergeWithSource?: boolean }> {
  const mode = copyAttributeMode(args);
  if (mode === "copy") return async () => ({});
  if (mode === "replace") {
    const replaced = objectAttributesOf(args);
    return async (key) => ({ attributes: await replaced(key) });
  }
  let given: ObjectAttributes | undefined;
  return async () => {
    given ??= attributesGiven(args);
    return { attributes: { ...given, metadata: given.metadata && { ...given.metadata } }, mergeWithSource: true };
  };
}

let contentTypes: Promise<typeof import("mime-types")> | undefined;

/**
 * The Content-Type of a file name's extension. mime-types is loaded at the
 * first guess: building its tables costs ~10-15 ms that downloads, listings,
 * copies and no-op syncs never need.
 */
async function guessContentType(fileName: string): Promise<string | false> {
  contentTypes ??= import("mime-types");
  return (await contentTypes).lookup(fileName);
}

export function parseMetadata(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const metadata = readMetadata(text);
  // HTTP headers carry ASCII: S3 cannot store anything else as x-amz-meta-*
  // (aws-cli refuses it the same way, before sending).
  for (const [key, value] of Object.entries(metadata)) {
    if (!/^[\x20-\x7e]*$/.test(key) || !/^[\x20-\x7e\t]*$/.test(value)) {
      throw new UsageError(`--metadata ${key}: S3 metadata can hold only printable ASCII characters, got ${JSON.stringify(value)}`);
    }
  }
  return metadata;
}

function readMetadata(text: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new UsageError(`--metadata is not valid JSON: ${text}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError("--metadata JSON must be an object");
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  }
  const out: Record<string, string> = {};
  for (const pair of trimmed.split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--metadata expects key=value[,key=value…] or a JSON object, got "${text}"`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return out;
}
