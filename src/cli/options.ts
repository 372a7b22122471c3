import type { Argv } from "yargs";
import { readFileSync } from "node:fs";
import { DEFAULT_NET_OPTIONS, parseDnsServers, parsePinnedAddresses, type ChecksumAlgorithm, type NetOptions, type ObjectAttributes, type PayloadSigning, type RequestSettings, type S3Settings, type TlsSettings } from "../engine/connection.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../engine/retry.js";
import { RetryPacer } from "../engine/pacer.js";
import { parseSize } from "../plan/parts.js";
import { UsageError } from "../plan/location.js";
import type { AwsConfig } from "./aws-config.js";
import { parseChecksumAlgorithm } from "../engine/integrity/checksums.js";
import { copyAttributeMode, headerAttributes, storageSettings, type ObjectOptionArgs } from "./object-options.js";
import { declareOptions, type OptionName } from "./option-table.js";

/** Connections assumed per 1 Gbit/s of target throughput (CRT: ~0.4 Gbit/s, ~50 MB/s each). */
const GBPS_PER_CONNECTION = 0.4;

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
  "concurrency", "target-throughput", "max-memory", "page-size", "list-ranges",
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
  quiet: boolean;
  "only-show-errors"?: boolean;
  progress: boolean;
  json: boolean;
  debug?: boolean;
}

/** The longest timer Node keeps (about 24.8 days): a longer one fires at once. */
const NEVER_MS = 2 ** 31 - 1;

/**
 * A timeout in ms: aws-cli's --cli-*-timeout when given (0 meaning no
 * timeout, as there), else s3x's own option.
 */
function timeoutMs(name: string, seconds: number, awsSeconds: number | undefined): number {
  if (awsSeconds === undefined) {
    positive(name, seconds);
    return seconds * 1000;
  }
  if (!Number.isFinite(awsSeconds) || awsSeconds < 0) throw new UsageError(`--cli-${name} must be a number of seconds (0: no timeout), got ${awsSeconds}`);
  return awsSeconds === 0 ? NEVER_MS : Math.min(awsSeconds * 1000, NEVER_MS);
}

/** The connection settings of one run, from the options and the resolved aws configuration (cli/aws-config). */
export function s3Settings(args: CommonArgs, config: AwsConfig, concurrency: number, debug?: (line: string) => void, requests?: RequestSettings): S3Settings {
  const endpointUrl = config.endpointUrl;
  const connectTimeoutMs = timeoutMs("connect-timeout", args["connect-timeout"], args["cli-connect-timeout"]);
  const readTimeoutMs = timeoutMs("read-timeout", args["read-timeout"], args["cli-read-timeout"]);
  const net: NetOptions = {
    ...DEFAULT_NET_OPTIONS,
    connectTimeoutMs,
    firstByteTimeoutMs: readTimeoutMs,
    stallTimeoutMs: readTimeoutMs,
    // Every address may take every request: when all but one are bad, that one carries the whole load.
    connectionsPerAddress: Math.max(concurrency, 1),
    pinned: pinnedOf(args),
    dnsServers: dnsServersOf(args),
    debug,
    ownHttp: httpClientOf() === "own",
    tls: tlsSettingsOf(args, endpointUrl),
  };
  return {
    endpointUrl,
    region: config.region,
    profile: config.profile,
    // As aws-cli: $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY come first unless --profile names a profile.
    credentialsFromEnvironment: !config.profileFromFlag && Boolean(process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY),
    noSignRequest: !args["sign-request"],
    forcePathStyle: args["force-path-style"],
    payloadSigning: payloadSigningOf(args),
    useAccelerateEndpoint: args["use-accelerate-endpoint"],
    net,
    requests,
  };
}

/**
 * TLS settings as in aws-cli: --ca-bundle (or $AWS_CA_BUNDLE) replaces the
 * CAs an https endpoint is verified with; --no-verify-ssl skips the check.
 * A plain-HTTP endpoint has none, and its runs never read the bundle.
 *
 * The bundle is read and parsed here, once, for every connection to share,
 * so a wrong path fails before anything is sent. It is also the cheaper way to
 * trust a private CA than NODE_EXTRA_CA_CERTS: Node 20 parses that one,
 * with its whole root store, at every start (~80 ms of CPU), whatever the
 * endpoint.
 */
function tlsSettingsOf(args: CommonArgs, endpointUrl: string | undefined): TlsSettings | undefined {
  if (endpointUrl !== undefined && /^http:/i.test(endpointUrl)) return undefined;
  const fromFlag = args["ca-bundle"] !== undefined;
  const file = args["ca-bundle"] ?? process.env.AWS_CA_BUNDLE;
  const source = fromFlag ? "--ca-bundle" : "$AWS_CA_BUNDLE";
  if (!file) return { verify: args["verify-ssl"] };
  let ca: string;
  try {
    ca = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`${source} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (!ca.includes("-----BEGIN CERTIFICATE-----")) throw new UsageError(`${source} ${file}: holds no PEM certificate`);
  try {
    // node:tls is loaded here, not imported at the top: loading it costs a plain-HTTP run's start-up ~10-30 ms.
    return { secureContext: process.getBuiltinModule("node:tls").createSecureContext({ ca }), verify: args["verify-ssl"] };
  } catch (err) {
    throw new UsageError(`${source} ${file}: not a valid PEM certificate bundle (${(err as Error).message})`);
  }
}

/**
 * $S3X_HTTP_CLIENT: "own" (default) sends requests over s3x's own HTTP/1.1
 * connections, plain or TLS; "undici" sends every request through undici —
 * a fallback should an S3-compatible server disagree with the former.
 */
function httpClientOf(): "own" | "undici" {
  const given = process.env.S3X_HTTP_CLIENT ?? "own";
  if (given !== "own" && given !== "undici") throw new UsageError(`S3X_HTTP_CLIENT must be own or undici, got "${given}"`);
  return given;
}

const PAYLOAD_SIGNING_MODES: readonly PayloadSigning[] = ["auto", "always", "never"];

function payloadSigningOf(args: CommonArgs): PayloadSigning {
  const given = args["payload-signing"] ?? process.env.S3X_PAYLOAD_SIGNING ?? "auto";
  const mode = given.toLowerCase() as PayloadSigning;
  if (!PAYLOAD_SIGNING_MODES.includes(mode)) throw new UsageError(`--payload-signing must be auto, always or never, got "${given}"`);
  return mode;
}

/** The retry policy of one command run, with one pacer shared by all its requests (one endpoint per run). */
export function retryPolicy(args: CommonArgs): RetryPolicy {
  const attempts = args["max-attempts"];
  if (!Number.isInteger(attempts) || attempts < 1) throw new UsageError(`--max-attempts must be a whole number of at least 1, got ${attempts}`);
  return { ...DEFAULT_RETRY_POLICY, maxAttempts: attempts, pacer: new RetryPacer() };
}

function pinnedOf(args: CommonArgs): Map<string, string[]> | undefined {
  if (!args.resolve || args.resolve.length === 0) return undefined;
  try {
    return parsePinnedAddresses(args.resolve);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function dnsServersOf(args: CommonArgs): string[] | undefined {
  if (!args["dns-server"] || args["dns-server"].length === 0) return undefined;
  try {
    return parseDnsServers(args["dns-server"]);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function concurrencyOf(args: CommonArgs): number {
  if (args.concurrency !== undefined) {
    if (!Number.isInteger(args.concurrency) || args.concurrency < 1) throw new UsageError(`--concurrency must be a whole number of at least 1, got ${args.concurrency}`);
    return args.concurrency;
  }
  positive("target-throughput", args["target-throughput"]);
  return Math.max(1, Math.ceil(args["target-throughput"] / GBPS_PER_CONNECTION));
}

/** Keys per ListObjectsV2 request: --page-size, 1 to 1000 (S3's maximum, and the default). */
export function pageSizeOf(args: CommonArgs): number | undefined {
  const size = args["page-size"];
  if (size === undefined) return undefined;
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new UsageError(`--page-size must be a whole number from 1 to 1000, got ${size}`);
  return size;
}

/** Key ranges listed at once: --list-ranges, a whole number of at least 1. */
export function listRangesOf(args: CommonArgs): number {
  const ranges = args["list-ranges"];
  if (!Number.isInteger(ranges) || ranges < 1) throw new UsageError(`--list-ranges must be a whole number of at least 1, got ${ranges}`);
  return ranges;
}

export function maxMemoryOf(args: CommonArgs): number {
  const bytes = parseSize(args["max-memory"]);
  if (bytes < 16 * 1024 * 1024) throw new UsageError(`--max-memory ${args["max-memory"]} is too small (at least 16MiB)`);
  return bytes;
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

function positive(name: string, value: number): void {
  if (!(value > 0)) throw new UsageError(`--${name} must be a positive number, got ${value}`);
}


/** Whether the user chose the upload checksum (--checksum-algorithm or $S3X_CHECKSUM_ALGORITHM) rather than taking the default. */
export function checksumRequested(args: { "checksum-algorithm"?: string }): boolean {
  return (args["checksum-algorithm"] ?? process.env.S3X_CHECKSUM_ALGORITHM) !== undefined;
}

/**
 * The checksum uploads carry: --checksum-algorithm, else $S3X_CHECKSUM_ALGORITHM,
 * else CRC32C on every endpoint, as a default the command adapts to what the
 * server does with it (engine/integrity/checksum-support): kept and relied on
 * where the server checks it (AWS echoes it), dropped where it ignores or
 * refuses it. CRC32C because it is the cheapest here: ~0.2 CPU-s per GiB with
 * @node-rs/crc32's hardware instructions, against the SDK's CRC64NVME.
 */
export function checksumAlgorithmOf(args: { "checksum-algorithm"?: string }): ChecksumAlgorithm | undefined {
  const given = args["checksum-algorithm"] ?? process.env.S3X_CHECKSUM_ALGORITHM;
  if (given === undefined) return "CRC32C";
  let parsed: ChecksumAlgorithm | "none";
  try {
    parsed = parseChecksumAlgorithm(given);
  } catch (err) {
    throw new UsageError(`--checksum-algorithm: ${(err as Error).message}`);
  }
  return parsed === "none" ? undefined : parsed;
}
