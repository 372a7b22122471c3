import { S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { NoAuthSigner } from "@smithy/core";
import { UndiciRequestHandler } from "../net/http-handler.js";
import { carrySignals, signalAwareHandler } from "./send.js";
import { PoolManager, type NetOptions, type AddressStats } from "../net/pools.js";

/** How to reach S3: the aws-cli style connection settings. */
export interface S3Settings {
  region?: string;
  endpointUrl?: string;
  profile?: string;
  noSignRequest: boolean;
  /** Path-style addressing; automatic (true) for custom endpoints unless set. */
  forcePathStyle?: boolean;
  net: NetOptions;
}

/** An S3 client whose every byte goes through s3x's own connection pools. */
export interface S3Connection {
  client: S3Client;
  addressStats(): Promise<AddressStats[]>;
  close(): Promise<void>;
}

export function connect(settings: S3Settings): S3Connection {
  const pools = new PoolManager(settings.net);
  const config: S3ClientConfig = {
    requestHandler: signalAwareHandler(new UndiciRequestHandler(pools, settings.net)),
    // Reuse the resolved middleware stack per command (see s3/send.ts).
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
  if (settings.endpointUrl) config.endpoint = settings.endpointUrl;
  if (settings.profile) config.profile = settings.profile;
  const region = settings.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (region) config.region = region;
  else if (settings.endpointUrl) config.region = "us-east-1"; // S3-compatible servers rarely care
  if (settings.noSignRequest) {
    config.httpAuthSchemes = [{ schemeId: "smithy.api#noAuth", identityProvider: () => async () => ({}), signer: new NoAuthSigner() }];
    config.httpAuthSchemeProvider = () => [{ schemeId: "smithy.api#noAuth" }];
  }
  const client = new S3Client(config);
  skipPayloadHashOverTls(client);
  carrySignals(client);
  return {
    client,
    addressStats: () => pools.stats(),
    async close() {
      client.destroy();
      await pools.close();
    },
  };
}

/** Operations whose bodies are object data, worth not hashing twice. */
const DATA_UPLOADS = new Set(["PutObjectCommand", "UploadPartCommand"]);

/**
 * SigV4 hashes every byte of a Buffer body with SHA-256 to sign it: ~0.7
 * CPU-s per GiB uploaded. Over TLS the connection already protects the
 * bytes, so data uploads are sent as UNSIGNED-PAYLOAD (as the CRT does);
 * over plain HTTP the payload stays signed, the only integrity check there.
 */
export function skipPayloadHashOverTls(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { protocol?: string; headers?: Record<string, string> } | undefined;
      if (request?.headers && request.protocol === "https:" && DATA_UPLOADS.has(context.commandName ?? "")) {
        request.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
      }
      return next(args);
    },
    { step: "build", name: "s3xUnsignedPayloadOverTls" },
  );
}
