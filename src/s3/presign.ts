import { HeadBucketCommand, type S3Client } from "./sdk.js";
import { send } from "./request.js";
import { bucketRegionsOf, signingRegionFor } from "./region-redirects.js";
import { encodeKey } from "./bucket-routes.js";
import { presignedQuery, queryString, type SigningCredentials } from "./sigv4.js";
import type { ObjectRef } from "./object-ref.js";

/** The longest a SigV4 presigned URL may live: 7 days. */
export const MAX_PRESIGN_SECONDS = 604_800;

/** What a presigned URL needs of the SDK client's resolved configuration. */
interface PresignConfig {
  credentials: () => Promise<SigningCredentials>;
  region: () => Promise<string>;
  endpoint?: () => Promise<{ protocol: string; hostname: string; port?: number; path: string }>;
  forcePathStyle?: boolean;
  systemClockOffset?: number;
}

/**
 * A presigned GET URL for an object (aws s3 presign), signed by s3x's own
 * SigV4 (s3/sigv4.ts) with the client's credentials, for the bucket's
 * region: a URL signed for another region than the bucket's does not work,
 * and nothing tells its holder why. With `signed` false (--no-sign-request)
 * the object's plain URL, as aws-cli prints then; nothing is sent.
 */
export async function presignGet(client: S3Client, ref: ObjectRef, expiresIn: number, nowMs = Date.now(), signed = true): Promise<string> {
  const config = client.config as unknown as PresignConfig;
  if (signed) await learnRegion(client, ref.bucket);
  const region = signed ? await signingRegionFor(client, ref.bucket) : await config.region();
  const { protocol, host, path } = await objectAddress(config, ref, region);
  if (!signed) return `${protocol}//${host}${path}`;
  const credentials = await config.credentials();
  const query = await presignedQuery("GET", host, path, credentials, region, "s3", nowMs + (config.systemClockOffset ?? 0), expiresIn);
  return `${protocol}//${host}${path}?${queryString(query)}`;
}

/**
 * Where an object is, addressed as the client addresses it: path-style on a
 * custom endpoint (or with --force-path-style), else virtual-hosted on AWS.
 */
async function objectAddress(config: PresignConfig, ref: ObjectRef, region: string): Promise<{ protocol: string; host: string; path: string }> {
  let protocol = "https:";
  let hostname = `s3.${region}.amazonaws.com`;
  let port: number | undefined;
  let basePath = "";
  if (config.endpoint) {
    const endpoint = await config.endpoint();
    ({ protocol, hostname, port } = endpoint);
    basePath = endpoint.path.replace(/\/$/, "");
  }
  // A bucket name with dots cannot be a TLS host name label: path-style then, as the SDK does.
  const pathStyle = config.forcePathStyle === true || ref.bucket.includes(".");
  if (!pathStyle) hostname = `${ref.bucket}.${hostname}`;
  const path = `${basePath}${pathStyle ? `/${ref.bucket}` : ""}/${encodeKey(ref.key)}`;
  const defaultPort = (protocol === "https:" && port === 443) || (protocol === "http:" && port === 80);
  const host = port === undefined || defaultPort ? hostname : `${hostname}:${port}`;
  return { protocol, host, path };
}

/**
 * Asks S3 where `bucket` lives with one HeadBucket, as aws-cli does before
 * presigning when it was given no region: a bucket in another region
 * answers with a redirect, which the client learns (s3/region-redirects.ts).
 * Any other outcome (access denied, no network) leaves the run's region:
 * the URL is still printed, as it was before s3x asked.
 */
async function learnRegion(client: S3Client, bucket: string): Promise<void> {
  if (bucketRegionsOf(client)?.regionOf(bucket) !== undefined) return;
  try {
    await send(client, new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    // Not a redirect: the configured region stands.
  }
}
