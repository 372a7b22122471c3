import { availableParallelism } from "node:os";
import { DEFAULT_NET_OPTIONS, parseDnsServers, parsePinnedAddresses, type ChecksumAlgorithm, type NetOptions, type PayloadSigning, type S3Settings } from "../engine/connection.js";
import { parseChecksumAlgorithm } from "../engine/integrity/checksums.js";
import { parseSize } from "../plan/parts.js";
import { UsageError } from "../plan/location.js";
import { resolveAwsConfig, type AwsConfig } from "./aws-config.js";
import type { CommonArgs } from "./options.js";
import { outputModeOf, type OutputMode } from "./results.js";
import { OPTION_TABLE, type OptionName, type OptionSpec } from "./option-table.js";
import { readS3Settings, S3_CONFIG_SETTINGS } from "./s3-config.js";
import { tlsSettingsOf } from "./tls-options.js";

/**
 * The one step that decides every option's value (issue #38): the command
 * line, then the environment, then the config file's `s3 =` section of the
 * profile, then the table's default — aws-cli's order. What each option
 * reads besides its flag is the table's (cli/option-table.ts: `env`,
 * `config`); this module applies it for every option alike, so no command
 * and nothing below cli/ reads an environment variable or a config setting
 * that stands for an option.
 *
 * Two kinds of option keep their own resolver, named by the table's
 * `resolvedBy`: the connection's identity (--endpoint-url, --region,
 * --profile: cli/aws-config.ts, where the profile decides what the file
 * says and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS may veto the environment)
 * and --shard-count ($S3X_SHARD_COUNT counts only for `--shard auto`:
 * plan/shard.ts).
 */

/** The parsed command line, as yargs hands it over: option name → value. */
export type ParsedArgs = Record<string, unknown>;

/** Where an option's value came from (for --debug and for messages that name it). */
export type OptionOrigin =
  | { from: "command line" }
  | { from: "environment"; variable: string }
  | { from: "config"; setting: string; section: string }
  | { from: "default" };

/** What the step decided: each option's origin, and the lines --debug prints about it. */
export interface OptionSources {
  origins: ReadonlyMap<OptionName, OptionOrigin>;
  debugLines: string[];
}

/** How a message names where a value came from: `--ca-bundle`, `$AWS_CA_BUNDLE`, `multipart_chunksize in [default] s3`. */
export function originLabel(name: OptionName, origin: OptionOrigin | undefined): string {
  switch (origin?.from) {
    case "environment":
      return `$${origin.variable}`;
    case "config":
      return `${origin.setting} in ${origin.section}`;
    default:
      return `--${name}`;
  }
}

/**
 * Fills in, on `args`, every option not typed on the command line from its
 * environment variable or its config setting, and returns where each value
 * came from. `typed`: the words of the command line as given.
 */
export async function resolveOptionSources(args: ParsedArgs, typed: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<OptionSources> {
  const profile = (typeof args.profile === "string" && args.profile) || env.AWS_PROFILE || "default";
  return applyOptionSources(args, typed, env, await readS3Settings(profile, env), profile);
}

/** resolveOptionSources with the config file's `s3 =` settings already read (`settings`, of `profile`). */
export function applyOptionSources(args: ParsedArgs, typed: readonly string[], env: NodeJS.ProcessEnv, settings: Record<string, string>, profile: string): OptionSources {
  const section = `[${profile === "default" ? "default" : `profile ${profile}`}] s3`;
  const origins = new Map<OptionName, OptionOrigin>();
  const debugLines: string[] = [];
  const configUsed = new Set<string>();
  for (const [name, spec] of Object.entries(OPTION_TABLE) as [OptionName, OptionSpec][]) {
    if (spec.resolvedBy) continue;
    // A config value is checked even when the flag or the environment wins: a typo in the file is an error, as in aws-cli.
    const configText = spec.config !== undefined ? settings[spec.config] : undefined;
    const configValue = configText !== undefined ? S3_CONFIG_SETTINGS[spec.config as string]?.value?.(configText, where(spec.config as string)) : undefined;
    if (spec.config !== undefined && configText !== undefined) configUsed.add(spec.config);
    if (typedOnCommandLine(typed, name, spec)) {
      origins.set(name, { from: "command line" });
      if (configText !== undefined) debugLines.push(`${where(spec.config as string)}: --${name} on the command line wins`);
      continue;
    }
    const variable = spec.env?.find((v) => env[v] !== undefined && env[v] !== "");
    if (variable !== undefined) {
      args[name] = valueFromEnvironment(spec, variable, env[variable] as string);
      origins.set(name, { from: "environment", variable });
      if (configText !== undefined) debugLines.push(`${where(spec.config as string)}: $${variable} wins`);
      continue;
    }
    if (configText !== undefined && configValue !== undefined) {
      args[name] = configValue;
      origins.set(name, { from: "config", setting: spec.config as string, section });
      debugLines.push(`${where(spec.config as string)} = ${configText}: --${name} ${String(configValue)}`);
      continue;
    }
    origins.set(name, { from: "default" });
  }
  for (const setting of Object.keys(settings)) {
    if (configUsed.has(setting)) continue;
    const known = setting in S3_CONFIG_SETTINGS;
    debugLines.push(`${where(setting)}: ${known ? "accepted, no effect in s3x" : "not an s3 transfer setting s3x knows, ignored"}`);
  }
  return { origins, debugLines };

  function where(setting: string): string {
    return `${setting} in ${section}`;
  }
}

/** An environment variable's text as the option's type; a number that is not one is a usage error naming the variable. */
function valueFromEnvironment(spec: OptionSpec, variable: string, text: string): string | number | boolean | string[] {
  switch (spec.type) {
    case "number": {
      const value = Number(text.trim());
      if (text.trim() === "" || !Number.isFinite(value)) throw new UsageError(`$${variable}="${text}" is not a number`);
      return value;
    }
    case "boolean": {
      const lower = text.trim().toLowerCase();
      if (lower === "true" || lower === "1") return true;
      if (lower === "false" || lower === "0") return false;
      throw new UsageError(`$${variable}="${text}" is not true or false`);
    }
    default:
      return spec.array ? [text] : text;
  }
}

/** Whether the option (or an alias, or its --no- form) was typed: `--name`, `--name=…`, `-a`. */
function typedOnCommandLine(typed: readonly string[], name: string, spec: OptionSpec): boolean {
  const longs = [name, ...(spec.aliases ?? []).filter((a) => a.length > 1)];
  const shorts = (spec.aliases ?? []).filter((a) => a.length === 1);
  return typed.some(
    (word) =>
      longs.some((long) => word === `--${long}` || word.startsWith(`--${long}=`) || word === `--no-${long}`) ||
      (shorts.length > 0 && /^-[^-]/.test(word) && shorts.some((short) => word.slice(1).includes(short))),
  );
}

/** The connection settings a run opens its connection with (engine/connection), but the per-run debug and request headers. */
export type ConnectionSettings = Omit<S3Settings, "requests" | "net"> & { net: Omit<NetOptions, "debug"> };

/** The options of one run every command shares, resolved, checked and typed once (the commands' Session is opened from it). */
export interface RunOptions {
  /** Where each option's value came from. */
  sources: OptionSources;
  /** Profile, region and endpoint (cli/aws-config.ts). */
  aws: AwsConfig;
  connection: ConnectionSettings;
  /** Requests in flight at once: --concurrency, else from --target-throughput. */
  concurrency: number;
  /** --max-memory in bytes. */
  maxMemory: number;
  /** Data-plane worker threads (--workers); 0: none. */
  workers: number;
  /** --workers or $S3X_WORKERS was given: the workers carry every multipart transfer, not only runs with enough work to pay for them. */
  workersAsked: boolean;
  /** --page-size; undefined: S3's default (1000). */
  listPageSize: number | undefined;
  listRanges: number;
  maxAttempts: number;
  output: { mode: OutputMode; progress: boolean; debug: boolean };
  /**
   * The upload checksum: --checksum-algorithm or $S3X_CHECKSUM_ALGORITHM,
   * else CRC32C as a default that adapts to the server. Checked at the first
   * call (by the commands that write objects), so that a listing never
   * fails over a variable it does not use.
   */
  checksum: () => UploadChecksum;
}

/**
 * The typed options of one run, from the parsed command line once
 * resolveOptionSources has filled in the environment and the config file.
 * Every value is checked here, before anything is sent: a wrong one is a
 * usage error naming it.
 */
export async function resolveRunOptions(args: CommonArgs & { "checksum-algorithm"?: string }, sources: OptionSources, env: NodeJS.ProcessEnv = process.env): Promise<RunOptions> {
  const aws = await resolveAwsConfig(args, env);
  const concurrency = concurrencyOf(args);
  return {
    sources,
    aws,
    connection: connectionSettings(args, sources.origins, aws, concurrency, env),
    concurrency,
    maxMemory: maxMemoryOf(args),
    workers: workersOf(args),
    workersAsked: args.workers !== undefined,
    listPageSize: pageSizeOf(args),
    listRanges: listRangesOf(args),
    maxAttempts: maxAttemptsOf(args),
    output: { mode: outputModeOf(args), progress: args.progress, debug: args.debug === true },
    checksum: once(() => ({ algorithm: checksumAlgorithmOf(args), requested: args["checksum-algorithm"] !== undefined })),
  };
}

export interface UploadChecksum {
  algorithm: ChecksumAlgorithm | undefined;
  /** Chosen by the user rather than s3x's default: a server that does not check it is an error. */
  requested: boolean;
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** Connections assumed per 1 Gbit/s of target throughput (CRT: ~0.4 Gbit/s, ~50 MB/s each). */
const GBPS_PER_CONNECTION = 0.4;

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
function connectionSettings(args: CommonArgs, origins: OptionSources["origins"], config: AwsConfig, concurrency: number, env: NodeJS.ProcessEnv): ConnectionSettings {
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
    tls: tlsSettingsOf(args, originLabel("ca-bundle", origins.get("ca-bundle")), endpointUrl, env),
  };
  return {
    endpointUrl,
    region: config.region,
    profile: config.profile,
    // As aws-cli: $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY come first unless --profile names a profile.
    credentialsFromEnvironment: !config.profileFromFlag && Boolean(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY),
    noSignRequest: !args["sign-request"],
    forcePathStyle: args["force-path-style"],
    payloadSigning: payloadSigningOf(args),
    useAccelerateEndpoint: args["use-accelerate-endpoint"],
    net,
  };
}

const PAYLOAD_SIGNING_MODES: readonly PayloadSigning[] = ["auto", "always", "never"];

function payloadSigningOf(args: CommonArgs): PayloadSigning {
  const given = args["payload-signing"] ?? "auto";
  const mode = given.toLowerCase() as PayloadSigning;
  if (!PAYLOAD_SIGNING_MODES.includes(mode)) throw new UsageError(`--payload-signing must be auto, always or never, got "${given}"`);
  return mode;
}

/** Attempts per request: --max-attempts, a whole number of at least 1. */
function maxAttemptsOf(args: CommonArgs): number {
  const attempts = args["max-attempts"];
  if (!Number.isInteger(attempts) || attempts < 1) throw new UsageError(`--max-attempts must be a whole number of at least 1, got ${attempts}`);
  return attempts;
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

function concurrencyOf(args: CommonArgs): number {
  if (args.concurrency !== undefined) {
    if (!Number.isInteger(args.concurrency) || args.concurrency < 1) throw new UsageError(`--concurrency must be a whole number of at least 1, got ${args.concurrency}`);
    return args.concurrency;
  }
  positive("target-throughput", args["target-throughput"]);
  return Math.max(1, Math.ceil(args["target-throughput"] / GBPS_PER_CONNECTION));
}

/** Keys per ListObjectsV2 request: --page-size, 1 to 1000 (S3's maximum, and the default). */
function pageSizeOf(args: CommonArgs): number | undefined {
  const size = args["page-size"];
  if (size === undefined) return undefined;
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new UsageError(`--page-size must be a whole number from 1 to 1000, got ${size}`);
  return size;
}

/** Key ranges listed at once: --list-ranges, a whole number of at least 1. */
/**
 * --workers (or $S3X_WORKERS): by default every core this process may use
 * (its CPU affinity, as taskset sets it) but one, which the main thread
 * keeps for planning, progress and the journal; at least one.
 */
function workersOf(args: CommonArgs): number {
  const given = args.workers;
  if (given === undefined) return Math.max(1, availableParallelism() - 1);
  if (!Number.isInteger(given) || given < 0 || given > 1024) throw new UsageError(`--workers must be a whole number from 0 to 1024, got ${given}`);
  return given;
}

function listRangesOf(args: CommonArgs): number {
  const ranges = args["list-ranges"];
  if (!Number.isInteger(ranges) || ranges < 1) throw new UsageError(`--list-ranges must be a whole number of at least 1, got ${ranges}`);
  return ranges;
}

function maxMemoryOf(args: CommonArgs): number {
  const bytes = parseSize(args["max-memory"]);
  if (bytes < 16 * 1024 * 1024) throw new UsageError(`--max-memory ${args["max-memory"]} is too small (at least 16MiB)`);
  return bytes;
}


function positive(name: string, value: number): void {
  if (!(value > 0)) throw new UsageError(`--${name} must be a positive number, got ${value}`);
}



/**
 * The checksum uploads carry: --checksum-algorithm, else $S3X_CHECKSUM_ALGORITHM,
 * else CRC32C on every endpoint, as a default the command adapts to what the
 * server does with it (engine/integrity/checksum-support): kept and relied on
 * where the server checks it (AWS echoes it), dropped where it ignores or
 * refuses it. CRC32C because it is the cheapest here: ~0.2 CPU-s per GiB with
 * @node-rs/crc32's hardware instructions, against the SDK's CRC64NVME.
 */
function checksumAlgorithmOf(args: { "checksum-algorithm"?: string }): ChecksumAlgorithm | undefined {
  const given = args["checksum-algorithm"];
  if (given === undefined) return "CRC32C";
  let parsed: ChecksumAlgorithm | "none";
  try {
    parsed = parseChecksumAlgorithm(given);
  } catch (err) {
    throw new UsageError(`--checksum-algorithm: ${(err as Error).message}`);
  }
  return parsed === "none" ? undefined : parsed;
}
