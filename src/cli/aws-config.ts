import { loadSharedConfigFiles } from "@smithy/shared-ini-file-loader";
import { UsageError } from "../plan/location.js";

/**
 * Region, endpoint and profile as aws-cli v2 resolves them for S3, from the
 * command line, the environment and the shared config and credentials files
 * ($AWS_CONFIG_FILE, $AWS_SHARED_CREDENTIALS_FILE; ~/.aws/config and
 * ~/.aws/credentials by default). Credentials themselves are left to the
 * SDK's chain (s3/client.ts), which reads the same files.
 */
export interface AwsConfig {
  /** The profile named by --profile or $AWS_PROFILE; undefined for the default one. */
  profile?: string;
  /** True when --profile named it: credentials then come from the profile only, never $AWS_ACCESS_KEY_ID. */
  profileFromFlag: boolean;
  /** Signing region: never missing (us-east-1, as aws-cli, s5cmd and rclone use for S3). */
  region: string;
  /** The S3 endpoint; undefined for AWS's own. */
  endpointUrl?: string;
  /** Where region and endpoint came from, for --debug ("--region", "$AWS_REGION", "profile dev", …). */
  regionSource: string;
  endpointSource?: string;
}

/** What of the command line aws-config reads. */
export interface ConfigArgs {
  "endpoint-url"?: string;
  region?: string;
  profile?: string;
}

type Section = Record<string, string | undefined>;

/** The region aws-cli's S3 commands use when none is configured. */
export const DEFAULT_REGION = "us-east-1";

/**
 * Resolves the configuration in aws-cli's order of precedence:
 *  - region: --region, $AWS_REGION, $AWS_DEFAULT_REGION, the profile's `region`, else us-east-1;
 *  - endpoint: --endpoint-url, $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the `endpoint_url` of the
 *    `s3 =` sub-section of the `[services NAME]` section the profile names (`services = NAME`),
 *    the profile's `endpoint_url`; $AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true or the profile's
 *    `ignore_configured_endpoint_urls = true` leaves only --endpoint-url;
 *  - a profile named by --profile or $AWS_PROFILE must exist in one of the two files.
 * The files are read only when something is left to look up, and the SDK's
 * loader caches them, so its credential chain does not read them again.
 */
export async function resolveAwsConfig(args: ConfigArgs, env: NodeJS.ProcessEnv = process.env): Promise<AwsConfig> {
  const given = (value: string | undefined): string | undefined => (value === undefined || value === "" ? undefined : value);
  const profileFromFlag = given(args.profile) !== undefined;
  const profile = given(args.profile) ?? given(env.AWS_PROFILE);
  const fromCommandLine = { region: given(args.region), endpoint: given(args["endpoint-url"]) };
  const envRegion = given(env.AWS_REGION) ?? given(env.AWS_DEFAULT_REGION);
  const envIgnore = booleanSetting("$AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", given(env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS));

  const envEndpoint = given(env.AWS_ENDPOINT_URL_S3) ?? given(env.AWS_ENDPOINT_URL);
  const endpointSettled = fromCommandLine.endpoint !== undefined || envIgnore === true || (envIgnore === false && envEndpoint !== undefined);
  const needsFiles = profile !== undefined || (fromCommandLine.region ?? envRegion) === undefined || !endpointSettled;
  const files = needsFiles ? await loadSharedConfigFiles({ configFilepath: given(env.AWS_CONFIG_FILE), filepath: given(env.AWS_SHARED_CREDENTIALS_FILE) }) : { configFile: {}, credentialsFile: {} };
  const profileName = profile ?? "default";
  const fromConfig: Section | undefined = files.configFile[profileName];
  const fromCredentials: Section | undefined = files.credentialsFile[profileName];
  if (profile !== undefined && fromConfig === undefined && fromCredentials === undefined) {
    throw new UsageError(`The config profile (${profile}) could not be found`);
  }
  // As botocore: the credentials file's values win over the config file's for the same profile.
  const settings: Section = { ...fromConfig, ...fromCredentials };
  const profileLabel = `profile ${profileName}`;

  let region = DEFAULT_REGION;
  let regionSource = "default for S3";
  if (fromCommandLine.region !== undefined) [region, regionSource] = [fromCommandLine.region, "--region"];
  else if (given(env.AWS_REGION) !== undefined) [region, regionSource] = [env.AWS_REGION as string, "$AWS_REGION"];
  else if (given(env.AWS_DEFAULT_REGION) !== undefined) [region, regionSource] = [env.AWS_DEFAULT_REGION as string, "$AWS_DEFAULT_REGION"];
  else if (given(settings.region) !== undefined) [region, regionSource] = [settings.region as string, profileLabel];

  const endpoint = fromCommandLine.endpoint !== undefined ? { url: fromCommandLine.endpoint, source: "--endpoint-url" } : configuredEndpoint(env, settings, files.configFile, profileLabel, envIgnore);
  if (endpoint && !/^https?:\/\/[^/]+/i.test(endpoint.url)) throw new UsageError(`${endpoint.source}: "${endpoint.url}" is not an http:// or https:// URL`);
  return { profile, profileFromFlag, region, regionSource, endpointUrl: endpoint?.url, endpointSource: endpoint?.source };
}

/** The endpoint from the environment or the config file, unless configured endpoints are to be ignored. */
function configuredEndpoint(
  env: NodeJS.ProcessEnv,
  settings: Section,
  configFile: Record<string, Section | undefined>,
  profileLabel: string,
  envIgnore: boolean | undefined,
): { url: string; source: string } | undefined {
  const ignore = envIgnore ?? booleanSetting(`ignore_configured_endpoint_urls in ${profileLabel}`, settings.ignore_configured_endpoint_urls) ?? false;
  if (ignore) return undefined;
  if (env.AWS_ENDPOINT_URL_S3) return { url: env.AWS_ENDPOINT_URL_S3, source: "$AWS_ENDPOINT_URL_S3" };
  if (env.AWS_ENDPOINT_URL) return { url: env.AWS_ENDPOINT_URL, source: "$AWS_ENDPOINT_URL" };
  const servicesName = settings.services;
  if (servicesName) {
    // The SDK's parser files `[services NAME]` under "services.NAME", and the keys of an indented `s3 =` sub-section as "s3.KEY".
    const services = configFile[`services.${servicesName}`];
    if (!services) throw new UsageError(`${profileLabel} names services section "${servicesName}" (services = ${servicesName}), but the config file has no [services ${servicesName}]`);
    const url = services["s3.endpoint_url"];
    if (url) return { url, source: `endpoint_url in [services ${servicesName}] s3` };
  }
  if (settings.endpoint_url) return { url: settings.endpoint_url, source: `endpoint_url in ${profileLabel}` };
  return undefined;
}

/** "true" / "false" (any case) as aws-cli reads boolean settings; undefined when not set. */
function booleanSetting(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined || value === "") return undefined;
  const lower = value.toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  throw new UsageError(`${name} must be true or false, got "${value}"`);
}
