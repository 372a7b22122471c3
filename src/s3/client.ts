import { HostDirectory, type NetOptions, type AddressStats } from "../net/pools.js";
import { Transport } from "../net/transport.js";
import { S3Requester, type CredentialSource } from "./request.js";
import { explainedCredentials, type CredentialProvider } from "./credentials.js";
import type { RequestSettings } from "./request-headers.js";
import type { PayloadSigning } from "./payload-signing.js";
import type { SigningCredentials } from "./sigv4.js";

/** How to reach S3: the aws-cli style connection settings. */
export interface S3Settings {
  /** Signing region, resolved as aws-cli does (cli/aws-config); us-east-1 when not given. */
  region?: string;
  /** Custom endpoint, already resolved; undefined for AWS. */
  endpointUrl?: string;
  /** Named profile for the SDK's credential chain. */
  profile?: string;
  /** Credentials from $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY (/ $AWS_SESSION_TOKEN) alone. */
  credentialsFromEnvironment?: boolean;
  noSignRequest: boolean;
  /** Path-style addressing; automatic (true) for custom endpoints unless set. */
  forcePathStyle?: boolean;
  /** Whether upload bodies are hashed into the SigV4 signature (s3/payload-signing.ts). */
  payloadSigning?: PayloadSigning;
  /** S3 Transfer Acceleration endpoints (bucket.s3-accelerate.amazonaws.com); AWS only. */
  useAccelerateEndpoint?: boolean;
  net: NetOptions;
  /** --request-payer and SSE-C keys: headers on every request concerned. */
  requests?: RequestSettings;
}

export type { PayloadSigning };

/** One run's way to S3: the request layer over s3x's own connection pools. */
export interface S3Connection {
  s3: S3Requester;
  addressStats(): Promise<AddressStats[]>;
  /** Another thread found `address` bad: this connection's pools avoid it too (net/pools HostDirectory.markBadElsewhere). */
  markAddressBad(address: string, problem: string): Promise<void>;
  /** Counts a hedged duplicate that went to `address` in this connection's pools (sent from another thread's retry loop). */
  countHedge(address: string, won: boolean): Promise<void>;
  close(): Promise<void>;
}

/**
 * `credentials`: where a data-plane worker thread gets the credentials the
 * main thread hands it (engine/workers); by default the settings say.
 */
export function connect(settings: S3Settings, credentials?: CredentialSource): S3Connection {
  const pools = new HostDirectory(settings.net);
  const transport = new Transport(pools, settings.net);
  const region = settings.region ?? "us-east-1";
  const s3 = new S3Requester(
    {
      endpoint: {
        region,
        endpointUrl: settings.endpointUrl,
        forcePathStyle: settings.forcePathStyle ?? settings.endpointUrl !== undefined,
        accelerate: settings.endpointUrl === undefined && settings.useAccelerateEndpoint === true,
      },
      credentials: settings.noSignRequest ? undefined : (credentials ?? credentialSource(settings, region)),
      payloadSigning: settings.payloadSigning ?? "auto",
      requests: settings.requests,
    },
    transport,
  );
  return { s3, addressStats: () => pools.stats(), markAddressBad: (address, problem) => pools.markBadElsewhere(address, problem),
    countHedge: (address, won) => pools.countHedge(address, won),
    close: () => transport.close() };
}

/** Discards the credential chain's log lines (it would warn on --profile with $AWS_ACCESS_KEY_ID set; aws-cli is silent). */
const SILENT_LOGGER = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/**
 * The run's credentials: the environment's keys alone, or the AWS SDK's
 * provider chain for the profile (SSO, credential_process, web identity,
 * role chains, IMDS), loaded at the first request that needs it so that a
 * run with keys in the environment never loads it. Failures name the
 * profile and the provider (s3/credentials.ts).
 */
function credentialSource(settings: S3Settings, region: string): CredentialSource {
  if (settings.credentialsFromEnvironment) return memoized(environmentCredentials);
  let chain: Promise<CredentialProvider> | undefined;
  const load = async (): Promise<CredentialProvider> => {
    const { defaultProvider } = await import("@aws-sdk/credential-provider-node");
    const sdkChain = defaultProvider({ profile: settings.profile, logger: SILENT_LOGGER, parentClientConfig: { region } }) as CredentialProvider;
    return explainedCredentials(sdkChain, settings.profile);
  };
  return async () => (await (chain ??= load()))();
}

/**
 * The environment's keys, as the SDK's fromEnv reads them. The signer
 * cache is keyed by the credentials object (s3/sigv4.ts), so the same
 * object is handed out every time: memoized.
 */
async function environmentCredentials(): Promise<SigningCredentials & { expiration?: Date }> {
  const { fromEnv } = await import("@aws-sdk/credential-provider-env");
  return fromEnv()();
}

/** A provider whose answer is kept until five minutes before it expires (a failure is not kept). */
function memoized(provider: () => Promise<SigningCredentials & { expiration?: Date }>): CredentialSource {
  let held: Promise<SigningCredentials & { expiration?: Date }> | undefined;
  return async () => {
    const current = held ? await held.catch(() => undefined) : undefined;
    if (current && (!current.expiration || current.expiration.getTime() - Date.now() > 5 * 60_000)) return current;
    held = provider();
    return held;
  };
}
