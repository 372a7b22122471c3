import type { S3Requester } from "./request.js";
import { headBucket } from "./buckets.js";
import { presignedQuery, queryString } from "./sigv4.js";
import type { ObjectRef } from "./object-ref.js";

/** The longest a SigV4 presigned URL may live: 7 days. */
export const MAX_PRESIGN_SECONDS = 604_800;

/**
 * A presigned GET URL for an object (aws s3 presign), signed by the
 * library's SigV4 (s3/sigv4.ts) with the run's credentials, for the
 * bucket's region: a URL signed for another region than the bucket's does
 * not work, and nothing tells its holder why. With `signed` false
 * (--no-sign-request) the object's plain URL, as aws-cli prints then;
 * nothing is sent.
 */
export async function presignGet(s3: S3Requester, ref: ObjectRef, expiresIn: number, nowMs = Date.now(), signed = true): Promise<string> {
  const credentials = signed ? await s3.signingCredentials() : undefined;
  if (credentials) await learnRegion(s3, ref.bucket);
  const route = s3.routeOf(ref.bucket, ref.key);
  const url = `${route.protocol}//${route.host}${route.path}`;
  if (!credentials) return url;
  const offset = s3.now() - Date.now();
  const query = await presignedQuery("GET", route.host, route.path, credentials, s3.regionOf(ref.bucket), "s3", nowMs + offset, expiresIn, s3.signerCache);
  return `${url}?${queryString(query)}`;
}

/**
 * Asks S3 where `bucket` lives with one HeadBucket, as aws-cli does before
 * presigning: a bucket in another region answers with a redirect, which the
 * connection learns (s3/request.ts). Any other outcome (access denied, no
 * network) leaves the run's region: the URL is still printed, as it was
 * before s3x asked.
 */
async function learnRegion(s3: S3Requester, bucket: string): Promise<void> {
  if (s3.regions.regionOf(bucket) !== undefined) return;
  try {
    await headBucket(s3, bucket);
  } catch {
    // Not a redirect: the configured region stands.
  }
}
