import { S3Client, type S3ClientConfig } from "./sdk.js";
import { NoAuthSigner } from "@smithy/core";
import { fromEnv } from "@aws-sdk/credential-provider-env";
import { PooledRequestHandler } from "../net/http-handler.js";
import { carrySignals, signalAwareHandler } from "./request.js";
import { requestStoredChecksums } from "./checksum-mode.js";
import { installContentMd5 } from "./content-md5.js";
import { readListingsDirectly } from "./list-xml.js";
import { learnBucketRoutes } from "./bucket-routes.js";
import { followRegionRedirects } from "./region-redirects.js";
import { installRequestSettings, type RequestSettings } from "./request-headers.js";
import { signPayloads, signsPayloadUnder, type PayloadSigning } from "./payload-signing.js";
import { HostDirectory, type NetOptions, type AddressStats } from "../net/pools.js";
import { explainedCredentials, type CredentialProvider } from "./credentials.js";

/** How to reach S3: the aws-cli style connection settings. */
export interface S3Settings {
  /** Signing region, resolved as aws-cli does (cli/aws-config); us-east-1 when not given. The SDK's own lookup is not used. */
  region?: string;
  /** Custom endpoint, already resolved; undefined for AWS. The SDK's own endpoint lookup is turned off. */
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

export { signPayloads, type PayloadSigning };

/** An S3 client whose every byte goes through s3x's own connection pools. */
export interface S3Connection {
  client: S3Client;
  addressStats(): Promise<AddressStats[]>;
  close(): Promise<void>;
}

export function connect(settings: S3Settings): S3Connection {
  const pools = new HostDirectory(settings.net);
  const config: S3ClientConfig = {
    requestHandler: signalAwareHandler(new PooledRequestHandler(pools, settings.net.ownHttp === false ? undefined : settings.net)),
    // Reuse the resolved middleware stack per command (see s3/request.ts).
    cacheMiddleware: true,
    // s3x retries per part with its own policy (engine/retry); SDK retries
    // would multiply attempts and hide which address failed.
    maxAttempts: 1,
    // Every S3-compatible server we know rejects or corrupts the SDK's default
    // aws-chunked uploads with checksum trailers: send plain known-length bodies.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    forcePathStyle: settings.forcePathStyle ?? settings.endpointUrl !== undefined,
  };
  config.region = settings.region ?? "us-east-1";
  // The endpoint was resolved as aws-cli does (the SDK's lookup knows no --profile).
  config.ignoreConfiguredEndpointUrls = true;
  if (settings.endpointUrl) config.endpoint = settings.endpointUrl;
  else if (settings.useAccelerateEndpoint) config.useAccelerateEndpoint = true;
  if (settings.profile) config.profile = settings.profile;
  // The SDK's chain skips $AWS_ACCESS_KEY_ID whenever $AWS_PROFILE is set; aws-cli uses it then too.
  if (settings.credentialsFromEnvironment) config.credentials = fromEnv();
  // The chain would print a multi-line console warning when --profile and $AWS_ACCESS_KEY_ID are both set
  // (aws-cli uses the profile then, silently): its warnings go to a silent logger instead.
  config.logger = SILENT_LOGGER;
  if (settings.noSignRequest) {
    config.httpAuthSchemes = [{ schemeId: "smithy.api#noAuth", identityProvider: () => async () => ({}), signer: new NoAuthSigner() }];
    config.httpAuthSchemeProvider = () => [{ schemeId: "smithy.api#noAuth" }];
  }
  const client = new S3Client(config);
  // Read by the signers on every request (and by s3/request.ts, s3/presign.ts): a failing profile says what failed.
  if (!settings.noSignRequest && !settings.credentialsFromEnvironment) {
    const resolved = client.config as unknown as { credentials: CredentialProvider };
    resolved.credentials = explainedCredentials(resolved.credentials, settings.profile);
  }
  trimPerRequestWork(client);
  reuseSigners(client);
  signPayloads(client, settings.payloadSigning ?? "auto");
  requestStoredChecksums(client);
  installContentMd5(client);
  readListingsDirectly(client);
  carrySignals(client);
  if (settings.requests) installRequestSettings(client, settings.requests);
  followRegionRedirects(client);
  // Anonymous requests stay with the SDK (direct GETs are signed).
  const payloadSigning = settings.payloadSigning ?? "auto";
  if (!settings.noSignRequest) learnBucketRoutes(client, (protocol, checksumChecked) => signsPayloadUnder(payloadSigning, protocol, checksumChecked));
  return {
    client,
    addressStats: () => pools.stats(),
    async close() {
      client.destroy();
      await pools.close();
    },
  };
}

/** Discards the SDK's log lines (its logger middleware is removed too: trimPerRequestWork). */
const SILENT_LOGGER = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** Sent as User-Agent and x-amz-user-agent on every request; built once. */
const USER_AGENT = `s3x aws-sdk-js lang/js md/nodejs#${process.versions.node} os/${process.platform}`;

/**
 * Middleware that costs CPU on every request and does nothing for s3x.
 * Small objects and listings are bound by per-request CPU (a profile of
 * 2,000 × 64 KiB downloads: the SDK's middleware ~0.8 ms per request), so:
 *  - the logger middleware filters every input and output through its
 *    schema for sensitive fields even when the logger is a no-op (~0.1 ms);
 *  - the retry middleware acquires and releases retry tokens although s3x
 *    sends each attempt itself with maxAttempts 1 (engine/retry, engine/pacer);
 *  - the user-agent middleware rebuilds and escapes the same string every
 *    time: it is set once here instead (it is metadata for server logs).
 */
export function trimPerRequestWork(client: S3Client): void {
  client.middlewareStack.remove("loggerMiddleware");
  // Signing is placed relative to "retryMiddleware": a pass-through keeps its place.
  client.middlewareStack.remove("retryMiddleware");
  client.middlewareStack.add((next) => next, { step: "finalizeRequest", name: "retryMiddleware", tags: ["RETRY"], priority: "high" });
  client.middlewareStack.remove("getUserAgentMiddleware");
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> } | undefined;
      if (request?.headers) {
        request.headers["user-agent"] = USER_AGENT;
        request.headers["x-amz-user-agent"] = USER_AGENT;
      }
      return next(args);
    },
    { step: "build", name: "s3xUserAgent" },
  );
}

type SignerProvider = (authScheme?: { name?: string; signingRegion?: string; signingName?: string; signingRegionSet?: string[] }) => Promise<unknown>;

/**
 * The SDK builds a new SigV4 signer for every request (spreading the whole
 * client configuration into it), and with it a new signing-key cache, so
 * every request derives its signing key again: four HMACs plus one more for
 * the cache key. One signer per auth scheme keeps the derived key for the day
 * (credentials are still read from the provider on every request, so they
 * refresh as before, and the key cache is keyed by them).
 */
export function reuseSigners(client: S3Client): void {
  const config = client.config as unknown as { signer?: SignerProvider };
  const original = config.signer;
  if (typeof original !== "function") return;
  const signers = new Map<string, Promise<unknown>>();
  config.signer = (authScheme) => {
    const key = `${authScheme?.name}|${authScheme?.signingRegion}|${authScheme?.signingName}|${authScheme?.signingRegionSet?.join(",")}`;
    let signer = signers.get(key);
    if (!signer) {
      signer = original(authScheme);
      signers.set(key, signer);
      signer.catch(() => signers.delete(key));
    }
    return signer;
  };
}
