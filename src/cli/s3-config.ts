import { loadSharedConfigFiles } from "@smithy/shared-ini-file-loader";
import { UsageError } from "../plan/location.js";

/**
 * aws-cli's transfer settings: the `s3 =` sub-section of the selected
 * profile in the config file, as aws users tune `aws s3` there:
 *
 *   [profile ml]
 *   s3 =
 *     max_concurrent_requests = 64
 *     multipart_chunksize = 64MB
 *
 * Each setting becomes the s3x option of the same meaning unless that option
 * is on the command line or in its environment variable (aws-cli's order;
 * cli/resolve-options.ts applies it). The table below is the whole mapping;
 * docs/aws-cli-options.md repeats it for users.
 */

interface Mapping {
  /** The s3x option the setting stands for (undefined: accepted, no effect). */
  option?: string;
  /** The option's value from the setting's text (undefined: leave the option as it is); throws on a value aws-cli would refuse too. */
  value?: (text: string, where: string) => string | number | boolean | undefined;
}

const SIZE = /^\s*\d+(\.\d+)?\s*([kmgt]i?b?)?\s*$/i;

function size(text: string, where: string): string {
  // aws-cli reads MB as MiB, as s3x's --part-size does.
  if (!SIZE.test(text)) throw new UsageError(`${where}: "${text}" is not a size (e.g. 8MB, 64MiB, 8388608)`);
  return text.trim();
}

function count(text: string, where: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${where}: "${text}" is not a whole number of at least 1`);
  return n;
}

function flag(text: string, where: string): boolean {
  const lower = text.trim().toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  throw new UsageError(`${where}: "${text}" is not true or false`);
}

export const S3_CONFIG_SETTINGS: Record<string, Mapping> = {
  max_concurrent_requests: { option: "concurrency", value: count },
  multipart_threshold: { option: "multipart-threshold", value: size },
  multipart_chunksize: { option: "part-size", value: size },
  addressing_style: {
    option: "force-path-style",
    value: (text, where) => {
      const style = text.trim().toLowerCase();
      if (style !== "path" && style !== "virtual" && style !== "auto") throw new UsageError(`${where}: "${text}" is not path, virtual or auto`);
      return style === "auto" ? undefined : style === "path";
    },
  },
  // true: hash every upload body into the signature, also over https; false is s3x's default (auto).
  payload_signing_enabled: { option: "payload-signing", value: (text, where) => (flag(text, where) ? "always" : undefined) },
  use_accelerate_endpoint: { option: "use-accelerate-endpoint", value: flag },
  // Accepted, no effect: s3x's queue is bounded by --max-memory; s3x has one transfer client.
  max_queue_size: {},
  preferred_transfer_client: {},
  // Accepted, not applied yet: s3x has no bandwidth limit.
  max_bandwidth: {},
};

/** The `s3 =` settings of a profile in the config file ($AWS_CONFIG_FILE, else ~/.aws/config). */
export async function readS3Settings(profile: string, env: NodeJS.ProcessEnv = process.env): Promise<Record<string, string>> {
  const configFilepath = env.AWS_CONFIG_FILE || undefined;
  const { configFile } = await loadSharedConfigFiles({ configFilepath, filepath: env.AWS_SHARED_CREDENTIALS_FILE || undefined });
  const section = configFile[profile] ?? {};
  const settings: Record<string, string> = {};
  // The SDK's parser files an indented sub-section's keys as "s3.KEY".
  for (const [key, value] of Object.entries(section)) if (key.startsWith("s3.") && value !== undefined) settings[key.slice(3)] = value;
  return settings;
}
