import type { S3Client, ServiceInputTypes, ServiceOutputTypes } from "@aws-sdk/client-s3";
import type { FinalizeRequestMiddleware } from "@smithy/types";
import type { HttpRequest } from "@smithy/core/protocols";
import { uriEncode } from "./sigv4.js";
import { redirectRegion } from "./region-redirects.js";

/**
 * Where each bucket's objects live, learnt from the SDK's own signed
 * requests, so that s3/request.ts can send the next ones itself: ranged
 * GETs, small PUTs, parts and CopyObject without the SDK's middleware stack.
 *
 * Through the SDK, one GetObject costs ~0.45 ms of CPU before and after the
 * network (command and endpoint resolution, schema serde, a dozen
 * middleware, header parsing into an output object) even with s3x's trims
 * (s3/client.ts), and its signer ~0.15 ms more. Thousands of small objects are
 * bound by that CPU on a couple of cores. So once the SDK has sent one
 * GetObject, HeadObject, PutObject, CreateMultipartUpload or CopyObject for a bucket, s3x knows where that
 * bucket's keys live (scheme, host, port, path before the key, signing
 * region) and builds the next such requests itself: the same headers,
 * signed with the SDK's credentials by s3x's SigV4 (s3/sigv4.ts, checked
 * against the SDK's signer), sent through the same request handler (s3x's
 * pools and fan-out).
 *
 * What is learned is checked: only a request whose path ends in the key as
 * this module encodes it teaches anything, so a key encoding or endpoint
 * shape this module does not reproduce leaves every request with the SDK.
 * Anonymous clients, S3 Express sessions and SigV4a stay with the SDK too.
 */

/** Where one bucket's objects are addressed and how requests to them are signed. */
export interface BucketRoute {
  protocol: string;
  hostname: string;
  port?: number;
  /** The path before the key, ending in "/" ("/bucket/" path-style, "/" virtual-hosted). */
  base: string;
  signingRegion: string;
}

const routes = new WeakMap<S3Client, Map<string, BucketRoute>>();
/** Requests whose path is the object's own (a query string, if any, aside). */
const LEARN_FROM = new Set(["GetObjectCommand", "HeadObjectCommand", "PutObjectCommand", "CreateMultipartUploadCommand", "UploadPartCommand", "CopyObjectCommand"]);
/**
 * Whether a client's uploads hash their payload into the signature, per
 * scheme and whether the server verifies the checksum sent (s3/payload-signing.ts).
 */
export type PayloadPolicy = (protocol: string, checksumChecked: boolean) => boolean;
const payloadPolicies = new WeakMap<S3Client, PayloadPolicy>();
const CREDENTIAL_SCOPE = /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/;

/**
 * Watches the SDK's signed GetObject, HeadObject and PutObject requests and remembers
 * each bucket's route (see above) once one is answered (not turned away for
 * its region). Installed after signing, so the request seen is the one sent.
 */
export function learnBucketRoutes(client: S3Client, payloadPolicy: PayloadPolicy): void {
  const known = new Map<string, BucketRoute>();
  routes.set(client, known);
  payloadPolicies.set(client, payloadPolicy);
  const learn: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next, context) => async (args) => {
    const input = args.input as { Bucket?: string; Key?: string };
    const request = args.request as HttpRequest | undefined;
    const learn = () => {
      if (request && input.Bucket && input.Key && LEARN_FROM.has(context.commandName ?? "") && !known.has(input.Bucket)) {
        const route = routeOf(request, input.Key);
        if (route) known.set(input.Bucket, route);
      }
    };
    try {
      const result = await next(args);
      learn();
      return result;
    } catch (err) {
      // A request S3 turned away for its signing region (s3/region-redirects.ts) shows no way; any other answer does.
      if (redirectRegion(err, context.commandName ?? "") === undefined) learn();
      throw err;
    }
  };
  client.middlewareStack.addRelativeTo(
    learn,
    { relation: "after", toMiddleware: "httpSigningMiddleware", name: "s3xLearnBucketRoutes" },
  );
}

/** The route a signed request reveals, or undefined when it is not one direct GETs can reproduce. */
export function routeOf(request: Pick<HttpRequest, "protocol" | "hostname" | "port" | "path" | "headers">, key: string): BucketRoute | undefined {
  const encodedKey = encodeKey(key);
  if (!request.path.endsWith(`/${encodedKey}`)) return undefined;
  const headers = lowerCased(request.headers);
  if (headers["x-amz-s3session-token"] !== undefined) return undefined;
  const authorization = headers.authorization ?? "";
  if (!authorization.startsWith("AWS4-HMAC-SHA256 ")) return undefined;
  const scope = CREDENTIAL_SCOPE.exec(authorization);
  if (!scope) return undefined;
  return {
    protocol: request.protocol,
    hostname: request.hostname,
    port: request.port,
    base: request.path.slice(0, request.path.length - encodedKey.length),
    signingRegion: scope[1],
  };
}

/** Whether requests for keys in `bucket` can go direct (the SDK has shown the way). */
export function canSendDirectly(client: S3Client, bucket: string): boolean {
  return routes.get(client)?.has(bucket) ?? false;
}

/** The route learnt for `bucket`, if any. */
export function routeFor(client: S3Client, bucket: string): BucketRoute | undefined {
  return routes.get(client)?.get(bucket);
}

/** Whether `client` hashes an upload payload into the signature over `protocol` (s3/payload-signing.ts). */
export function signsPayload(client: S3Client, protocol: string, checksumChecked = false): boolean {
  return payloadPolicies.get(client)?.(protocol, checksumChecked) ?? true;
}

/** A key made only of characters that stay as they are in a path (RFC 3986 unreserved, and "/"). */
const PLAIN_KEY = /^[A-Za-z0-9\-._~/]*$/;

/**
 * An S3 key in a URL path as the SDK writes it: every "/"-separated segment
 * percent-encoded like encodeURIComponent, plus !'()* (RFC 3986 reserved).
 */
export function encodeKey(key: string): string {
  // Most keys need no encoding at all: skip the split, encode and join.
  if (PLAIN_KEY.test(key)) return key;
  return key
    .split("/")
    .map(uriEncode)
    .join("/");
}

export function lowerCased(headers: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}
