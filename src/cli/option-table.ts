import type { Argv, Options, PositionalOptions } from "yargs";
import { DEFAULT_NET_OPTIONS } from "../engine/connection.js";
import { DEFAULT_RETRY_POLICY } from "../engine/retry.js";
import { DEFAULT_LIST_RANGES } from "../engine/listing.js";
import { MAX_PRESIGN_SECONDS } from "../engine/single-requests.js";

/**
 * Every option and positional s3x accepts, in one table (issue #38): what
 * it is called, what aws-cli means by it, its type and default, and where
 * else its value may come from. The commands' yargs declarations are made
 * from it (declareOptions), so the help, the completion and the parser
 * cannot disagree with it; a unit test (test/unit/cli/option-table.test.ts)
 * checks that no file of cli/ declares or reads an option outside it.
 */
export interface OptionSpec {
  type: "string" | "boolean" | "number";
  aliases?: string[];
  /** Repeatable: one value per occurrence (--exclude A --exclude B). */
  array?: boolean;
  default?: string | number | boolean;
  describe?: string;
  /** The help section; none: the command's own "Options:". */
  group?: string;
  /** Accepted (aws-cli scripts run) but not listed in the help or completion. */
  hidden?: boolean;
  /** What aws-cli means by the same name, or "s3x's own" when aws-cli has no such option. */
  aws: string;
  /** Environment variables that give the value when the flag is absent, first one winning. */
  env?: string[];
  /** The config file's `s3 =` setting that gives the value when the flag is absent (cli/s3-config.ts). */
  config?: string;
  /**
   * The module that resolves the option's other sources itself, where they
   * depend on more than the option (the profile, --shard auto); otherwise
   * cli/resolve-options.ts applies `env` and `config` for it.
   */
  resolvedBy?: "cli/aws-config.ts" | "plan/shard.ts";
  /** Help text of the commands that word the option for themselves (rm's --dryrun deletes, cat's writes). */
  byCommand?: Partial<Record<CommandName, { describe: string; group?: string }>>;
}

export type CommandName = "cp" | "mv" | "sync" | "ls" | "rm" | "mb" | "rb" | "presign" | "cat" | "completion";

export interface PositionalSpec {
  describe: string;
  /** The commands that demand it through yargs (the usage string alone leaves an `[optional]` one). */
  requiredBy?: CommandName[];
  byCommand?: Partial<Record<CommandName, string>>;
}

export const CANNED_ACLS = ["private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read", "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write"];

const AWS = "aws-cli's, same meaning";
const OWN = "s3x's own";
const NO_EFFECT = "aws-cli's (shapes aws-cli's own output or prompts): accepted so that scripts run, no effect";
const CONNECTION = "Connection:";
const PERFORMANCE = "Performance:";
const OUTPUT = "Output:";
const SELECTION = "Selection:";
const TRANSFER = "Transfer:";
const INTEGRITY = "Integrity:";
const ATTRIBUTES = "Object attributes:";
const REQUEST_PAYER = "requester: confirm you pay for requests to a requester-pays bucket (sent on every request)";

export const OPTION_TABLE = {
  // Options every command shares (cli/options.ts declares them before the commands).
  "endpoint-url": { type: "string", describe: "S3 endpoint URL (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile's endpoint_url or its [services] section's, else AWS)", group: CONNECTION, aws: AWS, env: ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"], resolvedBy: "cli/aws-config.ts" },
  region: { type: "string", describe: "AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile's, else us-east-1)", group: CONNECTION, aws: AWS, env: ["AWS_REGION", "AWS_DEFAULT_REGION"], resolvedBy: "cli/aws-config.ts" },
  profile: { type: "string", describe: "shared config/credentials profile (default: $AWS_PROFILE)", group: CONNECTION, aws: AWS, env: ["AWS_PROFILE"], resolvedBy: "cli/aws-config.ts" },
  "sign-request": { type: "boolean", default: true, describe: "sign requests; --no-sign-request for public buckets", group: CONNECTION, aws: "aws-cli's --no-sign-request" },
  "force-path-style": { type: "boolean", describe: "path-style bucket addressing (automatic with --endpoint-url)", group: CONNECTION, aws: OWN + " (aws-cli: addressing_style = path)", config: "addressing_style" },
  "payload-signing": { type: "string", describe: "hash upload bodies into the signature: auto (over plain HTTP only, and not once the server has shown it checks the upload checksum; TLS protects the bytes), always, never (UNSIGNED-PAYLOAD, as the CRT does: saves ~0.6 CPU-s per GiB); default $S3X_PAYLOAD_SIGNING or auto", group: CONNECTION, aws: OWN + " (aws-cli: payload_signing_enabled)", env: ["S3X_PAYLOAD_SIGNING"], config: "payload_signing_enabled" },
  "ca-bundle": { type: "string", describe: "PEM file of the CA certificates to verify an https endpoint with, instead of Node's (default $AWS_CA_BUNDLE)", group: CONNECTION, aws: AWS, env: ["AWS_CA_BUNDLE"] },
  "verify-ssl": { type: "boolean", default: true, describe: "verify the TLS certificate of an https endpoint; --no-verify-ssl to skip that", group: CONNECTION, aws: "aws-cli's --no-verify-ssl" },
  "connect-timeout": { type: "number", default: DEFAULT_NET_OPTIONS.connectTimeoutMs / 1000, describe: "seconds to establish a connection", group: CONNECTION, aws: OWN + " (aws-cli: --cli-connect-timeout)" },
  "read-timeout": { type: "number", default: DEFAULT_NET_OPTIONS.stallTimeoutMs / 1000, describe: "seconds to wait for a response's first byte, or for more bytes of a response that stalls", group: CONNECTION, aws: OWN + " (aws-cli: --cli-read-timeout)" },
  resolve: { type: "string", array: true, describe: "use these addresses for HOST instead of DNS: HOST=IP[,IP…] (repeatable)", group: CONNECTION, aws: OWN },
  "dns-server": { type: "string", array: true, describe: "ask this DNS server (IP or IP:PORT) for the endpoint's addresses (repeatable)", group: CONNECTION, aws: OWN },
  "max-attempts": { type: "number", default: DEFAULT_RETRY_POLICY.maxAttempts, describe: "attempts per request before giving up (retries use full-jitter backoff)", group: CONNECTION, aws: OWN + " (aws-cli: max_attempts in the config file)" },
  concurrency: { type: "number", describe: "requests in flight at once (default: from --target-throughput)", group: PERFORMANCE, aws: OWN, config: "max_concurrent_requests" },
  "target-throughput": { type: "number", default: 10, describe: "target Gbit/s; sets the default concurrency (~0.4 Gbit/s per connection)", group: PERFORMANCE, aws: OWN + " (aws-cli CRT: target_bandwidth)" },
  "max-memory": { type: "string", default: "1GiB", describe: "most memory held in part buffers at once", group: PERFORMANCE, aws: OWN },
  "page-size": { type: "number", describe: "keys per listing request, 1 to 1000 (default: 1000, the most S3 returns)", group: PERFORMANCE, aws: AWS },
  workers: { type: "number", describe: "worker threads that move the bytes of multipart transfers (ranged downloads to files and streams, upload parts); 0: all on the main thread (default: $S3X_WORKERS, else the cores this process may use minus one, at least 1, for runs of 256 MiB or more: less is cheaper on one thread)", group: PERFORMANCE, aws: OWN, env: ["S3X_WORKERS"] },
  "list-ranges": { type: "number", default: DEFAULT_LIST_RANGES, describe: "key ranges a recursive listing lists at once (1: page by page)", group: PERFORMANCE, aws: OWN },
  quiet: { type: "boolean", aliases: ["q"], default: false, describe: "print nothing about the objects, not even failures (the exit status tells)", group: OUTPUT, aws: AWS },
  "only-show-errors": { type: "boolean", default: false, describe: "print failures only: no per-object lines, summary or progress", group: OUTPUT, aws: AWS },
  progress: { type: "boolean", default: true, describe: "progress line on a terminal; --no-progress to hide it", group: OUTPUT, aws: "aws-cli's --no-progress" },
  json: { type: "boolean", default: false, describe: "print JSON Lines: one per object, then a summary (with per-address stats)", group: OUTPUT, aws: OWN },
  debug: { type: "boolean", default: false, describe: "print addresses, health changes and per-address counters on stderr", group: OUTPUT, aws: "aws-cli's, s3x's own lines" },
  // aws-cli's names for the timeouts (seconds; 0 waits forever): they win over --connect-timeout and --read-timeout.
  "cli-connect-timeout": { type: "number", hidden: true, aws: AWS },
  "cli-read-timeout": { type: "number", hidden: true, aws: AWS },
  output: { type: "string", hidden: true, aws: NO_EFFECT },
  query: { type: "string", hidden: true, aws: NO_EFFECT },
  color: { type: "string", hidden: true, aws: NO_EFFECT },
  "cli-binary-format": { type: "string", hidden: true, aws: NO_EFFECT },
  paginate: { type: "boolean", hidden: true, aws: NO_EFFECT },
  "cli-pager": { type: "boolean", hidden: true, aws: NO_EFFECT },
  "cli-auto-prompt": { type: "boolean", hidden: true, aws: NO_EFFECT },
  // S3 Transfer Acceleration on AWS: no flag in aws-cli either, only the config file's setting.
  "use-accelerate-endpoint": { type: "boolean", hidden: true, aws: "aws-cli's use_accelerate_endpoint setting", config: "use_accelerate_endpoint" },

  // What written objects carry (cp, mv, sync: cli/object-options.ts).
  "metadata-directive": { type: "string", describe: "S3→S3 copies: COPY the source's metadata and headers, or REPLACE them with the ones given (default: REPLACE when any is given)", group: ATTRIBUTES, aws: AWS },
  "copy-props": { type: "string", describe: "S3→S3 copies: default or metadata-directive: keep the source's Content-Type, Cache-Control, Content-* headers, Expires and metadata where none is given; none: only the ones given (ignored with --metadata-directive)", group: ATTRIBUTES, aws: "aws-cli's (s3x copies no tags: default = metadata-directive)" },
  acl: { type: "string", describe: `canned ACL of written objects: ${CANNED_ACLS.join(", ")}`, group: ATTRIBUTES, aws: AWS },
  "cache-control": { type: "string", describe: "Cache-Control of written objects", group: ATTRIBUTES, aws: AWS },
  "content-encoding": { type: "string", describe: "Content-Encoding of written objects", group: ATTRIBUTES, aws: AWS },
  "content-disposition": { type: "string", describe: "Content-Disposition of written objects", group: ATTRIBUTES, aws: AWS },
  "content-language": { type: "string", describe: "Content-Language of written objects", group: ATTRIBUTES, aws: AWS },
  expires: { type: "string", describe: "Expires of written objects (a date, e.g. 2027-01-01T00:00:00Z)", group: ATTRIBUTES, aws: AWS },
  sse: { type: "string", describe: "server-side encryption of written objects: AES256 or aws:kms", group: ATTRIBUTES, aws: AWS },
  "sse-kms-key-id": { type: "string", describe: "KMS key for --sse aws:kms", group: ATTRIBUTES, aws: AWS },
  "sse-c": { type: "string", describe: "customer-key encryption (SSE-C): AES256, with --sse-c-key", group: ATTRIBUTES, aws: AWS },
  "sse-c-key": { type: "string", describe: "the 32-byte SSE-C key (or fileb://FILE) to write and read objects with", group: ATTRIBUTES, aws: AWS },
  "sse-c-copy-source": { type: "string", describe: "S3→S3: the source is SSE-C encrypted: AES256, with --sse-c-copy-source-key", group: ATTRIBUTES, aws: AWS },
  "sse-c-copy-source-key": { type: "string", describe: "the SSE-C key of the copy's source (or fileb://FILE)", group: ATTRIBUTES, aws: AWS },
  "request-payer": { type: "string", describe: REQUEST_PAYER, group: ATTRIBUTES, aws: AWS, byCommand: { ls: { describe: REQUEST_PAYER }, rm: { describe: REQUEST_PAYER } } },
  grants: { type: "string", array: true, describe: "grants on written objects: PERMISSION=GRANTEE, PERMISSION one of read, readacl, writeacl, full (e.g. read=uri=http://acs.amazonaws.com/groups/global/AllUsers)", group: ATTRIBUTES, aws: AWS },
  "website-redirect": { type: "string", describe: "x-amz-website-redirect-location of written objects", group: ATTRIBUTES, aws: AWS },
  "guess-mime-type": { type: "boolean", default: true, describe: "Content-Type from the file name; --no-guess-mime-type sends application/octet-stream", group: ATTRIBUTES, aws: "aws-cli's --no-guess-mime-type" },
  // aws-cli skips GLACIER objects unless told otherwise; s3x sends the request and reports the server's answer.
  "force-glacier-transfer": { type: "boolean", hidden: true, aws: "aws-cli's, no effect (s3x always sends the request)" },
  "ignore-glacier-warnings": { type: "boolean", hidden: true, aws: "aws-cli's, no effect (s3x always sends the request)" },

  // Transfers (cp, mv, sync; cat reads --part-size and --verify-etag too).
  "part-size": { type: "string", describe: "part size (e.g. 16MiB); uploads raise it to stay within 10,000 parts", group: TRANSFER, aws: OWN + " (aws-cli: multipart_chunksize)", config: "multipart_chunksize", byCommand: { cat: { describe: "part size of the ranged GETs (e.g. 16MiB)", group: TRANSFER } } },
  "multipart-threshold": { type: "string", default: "8MiB", describe: "files larger than this are uploaded in parts", group: TRANSFER, aws: OWN + " (aws-cli: multipart_threshold)", config: "multipart_threshold" },
  "content-type": { type: "string", describe: "Content-Type of uploaded objects (default: guessed from the file name)", group: TRANSFER, aws: AWS },
  "storage-class": { type: "string", describe: "storage class of uploaded objects (STANDARD, INTELLIGENT_TIERING, …)", group: TRANSFER, aws: AWS },
  metadata: { type: "string", describe: "user metadata: key=value[,key=value…] or a JSON object", group: TRANSFER, aws: AWS },
  "copy-threshold": { type: "string", default: "5GiB", describe: "S3→S3 copies above this use concurrent UploadPartCopy ranges (max 5GiB)", group: TRANSFER, aws: OWN },
  "keep-failed-uploads": { type: "boolean", default: false, describe: "do not abort a multipart upload that failed", group: TRANSFER, aws: OWN },
  "checksum-algorithm": { type: "string", describe: "checksum sent with uploads: CRC32C, CRC32, CRC64NVME, SHA256 or none; given, a server that does not check it is an error (default: $S3X_CHECKSUM_ALGORITHM, else CRC32C wherever the server checks it, dropped where it does not)", group: INTEGRITY, aws: "aws-cli's (s3x adds none, and adapts its default to the server)", env: ["S3X_CHECKSUM_ALGORITHM"] },
  "verify-etag": { type: "boolean", default: false, describe: "check downloaded single-part objects against their MD5 ETag", group: INTEGRITY, aws: OWN, byCommand: { cat: { describe: "check single-part objects against their MD5 ETag", group: INTEGRITY } } },
  resume: { type: "boolean", default: false, describe: "continue interrupted uploads and downloads instead of starting over", group: INTEGRITY, aws: OWN },
  "expected-size": { type: "string", describe: "uploads from stdin: the stream's expected size (e.g. 200GiB), so parts are large enough to stay within 10,000", group: TRANSFER, aws: AWS },
  // One region per run for now: every request is signed for --region (docs/aws-cli-options.md).
  "source-region": { type: "string", describe: "S3→S3: the source bucket's region (accepted for aws-cli scripts; s3x signs every request for --region)", group: TRANSFER, aws: "aws-cli's, no effect yet (one region per run)" },

  // Which objects a many-object command takes (cli/commands/selection.ts).
  include: { type: "string", array: true, describe: "include paths matching this glob (later filters win)", group: SELECTION, aws: AWS, byCommand: { cat: { describe: "include keys matching this glob (later filters win)", group: SELECTION }, rm: { describe: "include keys matching this glob (later filters win)" } } },
  exclude: { type: "string", array: true, describe: "exclude paths matching this glob (later filters win)", group: SELECTION, aws: AWS, byCommand: { cat: { describe: "exclude keys matching this glob (later filters win)", group: SELECTION }, rm: { describe: "exclude keys matching this glob (later filters win)" } } },
  dryrun: { type: "boolean", default: false, describe: "print what would be done, change nothing", group: SELECTION, aws: AWS, byCommand: { cat: { describe: "print what would be written, write nothing", group: SELECTION }, rm: { describe: "print what would be deleted, delete nothing" } } },
  "follow-symlinks": { type: "boolean", default: true, describe: "follow symlinks when uploading a directory (--no-follow-symlinks skips them)", group: SELECTION, aws: AWS },
  recursive: { type: "boolean", aliases: ["r"], default: false, describe: "copy every object under a directory or prefix", group: SELECTION, aws: AWS, byCommand: { ls: { describe: "every object under the prefix, not one level" }, rm: { describe: "delete every object under the prefix" } } },
  shard: { type: "string", describe: "take shard I of N (0-based, I/N): a split of the objects, the same on every run; auto: I and N from torchrun, Slurm (srun, arrays), Kubernetes Indexed Jobs or MPI. $S3X_WORKER=ID/COUNT splits the shard among DataLoader workers", group: SELECTION, aws: OWN },
  "shard-balance": { type: "string", describe: "what --shard balances between shards: bytes (default: the same transfer time) or count (the same number of objects, within 1, as DDP needs)", group: SELECTION, aws: OWN },
  "shard-count": { type: "number", describe: "with --shard auto under a Kubernetes Indexed Job: the number of completions (default $S3X_SHARD_COUNT)", group: SELECTION, aws: OWN, env: ["S3X_SHARD_COUNT"], resolvedBy: "plan/shard.ts" },
  shuffle: { type: "string", describe: "take the objects in an order given by this seed (the same on every worker; a new seed per epoch), before sharding", group: SELECTION, aws: OWN },
  "group-by": { type: "string", describe: "stem: a sample's objects (WebDataset's 000123.jpg + 000123.cls: the key up to the first dot of its last part) stay together, in key order, through --shard and --shuffle (default: each object on its own)", group: SELECTION, aws: OWN },
  from: { type: "string", describe: "the objects listed in this file (- for stdin): s3:// URLs or keys one per line, a SageMaker manifest, or JSON Lines (augmented manifest)", group: SELECTION, aws: OWN },
  attribute: { type: "string", describe: "with --from JSON Lines: the attribute that holds each object's URL (default source-ref)", group: SELECTION, aws: OWN },
  "check-manifest": { type: "boolean", describe: "with --from: HEAD every listed object before anything moves, and stop if one is missing (default: each is checked as it is reached)", group: SELECTION, aws: OWN },
  tar: { type: "boolean", default: false, describe: "with --recursive to - (stdout) or a named pipe: each object as a tar entry", group: SELECTION, aws: OWN, byCommand: { cat: { describe: "write each object as a tar entry (its key as the name), then the end of the archive", group: SELECTION } } },
  delete: { type: "boolean", default: false, describe: "delete destination files that are not in the source (never ones the filters exclude)", group: SELECTION, aws: AWS },
  "size-only": { type: "boolean", default: false, describe: "copy only when sizes differ", group: SELECTION, aws: AWS },
  "exact-timestamps": { type: "boolean", default: false, describe: "accepted for aws-cli; downloads already copy when the times differ at all", group: SELECTION, aws: "aws-cli's; s3x's downloads always behave so" },

  // One command's own.
  "human-readable": { type: "boolean", default: false, describe: "sizes in KiB, MiB, GiB", aws: AWS },
  summarize: { type: "boolean", default: false, describe: "print the number of objects and total size", aws: AWS },
  uploads: { type: "boolean", default: false, describe: "list in-progress multipart uploads under the prefix instead of objects", aws: OWN, byCommand: { rm: { describe: "abort in-progress multipart uploads under the prefix instead of deleting objects" } } },
  "older-than": { type: "string", describe: "with --uploads: only uploads started longer ago than this (30m, 12h, 1d, 2w)", aws: OWN },
  force: { type: "boolean", default: false, describe: "first delete every object in the bucket and abort its in-progress multipart uploads", aws: AWS },
  "expires-in": { type: "number", default: 3600, describe: `seconds the URL stays valid (at most ${MAX_PRESIGN_SECONDS}, 7 days)`, aws: AWS },
} satisfies Record<string, OptionSpec>;

export type OptionName = keyof typeof OPTION_TABLE;

/** The words a command takes without a flag; their help differs by command. */
export const POSITIONAL_TABLE = {
  source: { describe: "s3://bucket/key, a local file, or - for stdin", byCommand: { cat: "s3://bucket/key, or s3://bucket/prefix/ for every object under it (in listing order); with --from, the prefix the listed keys are relative to" } },
  destination: { describe: "s3://bucket/key, a local path, or - for stdout" },
  path: {
    describe: "s3://bucket[/prefix]; no argument lists buckets",
    byCommand: { rm: "s3://bucket/key, or s3://bucket/prefix with --recursive; with --from, the prefix the listed keys are relative to", presign: "s3://bucket/key (or bucket/key, as aws-cli)" },
    requiredBy: ["presign"],
  },
  bucket: { describe: "s3://bucket to create (in --region)", requiredBy: ["mb", "rb"], byCommand: { rb: "s3://bucket to delete" } },
  // Its help names the shells completion.ts has scripts for.
  shell: { describe: "the shell to complete for" },
} satisfies Record<string, PositionalSpec>;

export type PositionalName = keyof typeof POSITIONAL_TABLE;

/** Every name the table knows: options, their aliases and positionals (what a command may read from its args). */
export function knownArgNames(): Set<string> {
  const names = new Set<string>(Object.keys(POSITIONAL_TABLE));
  for (const [name, spec] of Object.entries(OPTION_TABLE) as [string, OptionSpec][]) {
    names.add(name);
    for (const alias of spec.aliases ?? []) names.add(alias);
  }
  return names;
}

/** The yargs declaration of one option, as `command` words it. */
function yargsOption(spec: OptionSpec, command: CommandName | undefined): Options {
  const own = command !== undefined ? spec.byCommand?.[command] : undefined;
  const describe = own ? own.describe : spec.describe;
  const group = own ? own.group : spec.group;
  // yargs reads the presence of a key ('default' in opt), not its value: undefined ones are left out.
  const options: Options = { type: spec.type };
  if (spec.aliases) options.alias = spec.aliases;
  if (spec.array) options.array = true;
  if (spec.default !== undefined) options.default = spec.default;
  if (describe !== undefined) options.describe = describe;
  if (group !== undefined) options.group = group;
  if (spec.hidden) options.hidden = true;
  return options;
}

/**
 * Declares the named options on a command's parser, in the order given
 * (the help lists each group's options in that order), worded for `command`.
 */
export function declareOptions<T>(y: Argv<T>, names: readonly OptionName[], command?: CommandName): Argv<T> {
  let out = y;
  for (const name of names) out = out.option(name, yargsOption(OPTION_TABLE[name], command));
  return out;
}

/** Declares a positional of the table, worded for `command` (`describe`: help text the caller computes). */
export function declarePositional<T>(y: Argv<T>, name: PositionalName, command?: CommandName, describe?: string): Argv<T> {
  const spec: PositionalSpec = POSITIONAL_TABLE[name];
  const options: PositionalOptions = { type: "string", describe: describe ?? (command !== undefined ? spec.byCommand?.[command] : undefined) ?? spec.describe };
  if (command !== undefined && spec.requiredBy?.includes(command)) options.demandOption = true;
  return y.positional(name, options) as Argv<T>;
}

/** The table's default of an option that has one. */
export function defaultOf(name: OptionName): string | number | boolean | undefined {
  return (OPTION_TABLE[name] as OptionSpec).default;
}
