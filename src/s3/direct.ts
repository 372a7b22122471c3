import type { S3Client, ServiceInputTypes, ServiceOutputTypes } from "@aws-sdk/client-s3";
import type { FinalizeRequestMiddleware } from "@smithy/types";
import { HttpRequest, type HttpResponse } from "@smithy/core/protocols";
import { createHash } from "node:crypto";
import { attachRouting, takeStartingRouting } from "../net/routing.js";
import { readAll } from "./body.js";
import { signHeaders, uriEncode, type SigningCredentials } from "./sigv4.js";
import { extraHeaders, type RequestKind } from "./request-headers.js";

/**
 * Ranged GETs, small PUTs and CopyObject without the SDK's middleware stack.
 *
 * Through the SDK, one GetObject costs ~0.45 ms of CPU before and after the
 * network (command and endpoint resolution, schema serde, a dozen
 * middleware, header parsing into an output object) even with s3x's trims
 * (s3/client.ts), and its signer ~0.15 ms more. Thousands of small objects are
 * bound by that CPU on a couple of cores. So once the SDK has sent one
 * GetObject, HeadObject, PutObject, CreateMultipartUpload or CopyObject for a bucket, s3x knows where that
 * bucket's keys live (scheme, host, port, path before the key, signing
 * region) and builds the next such requests itself: the same headers,
 * signed with the SDK's credentials and signer (s3/sigv4.ts), sent
 * through the same request handler (s3x's
 * pools and fan-out).
 *
 * What is learned is checked: only a request whose path ends in the key as
 * this module encodes it teaches anything, so a key encoding or endpoint
 * shape this module does not reproduce leaves every request with the SDK.
 * Anonymous clients, S3 Express sessions and SigV4a stay with the SDK too.
 */

/** Where one bucket's objects are addressed and how requests to them are signed. */
interface BucketRoute {
  protocol: string;
  hostname: string;
  port?: number;
  /** The path before the key, ending in "/" ("/bucket/" path-style, "/" virtual-hosted). */
  base: string;
  signingRegion: string;
}

/** The response of a direct request: status, lower-case headers, the body stream. */
export interface DirectResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What direct requests use of the SDK client's resolved configuration. */
interface DirectConfig {
  /** The SDK's memoized credential chain: cheap to call, refreshes expiring credentials. */
  credentials: () => Promise<SigningCredentials>;
  systemClockOffset?: number;
  requestHandler: { handle(request: HttpRequest, options?: { abortSignal?: AbortSignal }): Promise<{ response: HttpResponse }> };
}

const routes = new WeakMap<S3Client, Map<string, BucketRoute>>();
/** Requests whose path is the object's own (a query string, if any, aside). */
const LEARN_FROM = new Set(["GetObjectCommand", "HeadObjectCommand", "PutObjectCommand", "CreateMultipartUploadCommand", "UploadPartCommand", "CopyObjectCommand"]);
/** Whether a client's uploads hash their payload into the signature, per scheme (s3/client.ts signPayloads). */
const payloadPolicies = new WeakMap<S3Client, (protocol: string) => boolean>();
/** SHA-256 of an empty payload: what the SDK signs for a GET. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const CREDENTIAL_SCOPE = /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/;

/**
 * Watches the SDK's signed GetObject, HeadObject and PutObject requests and remembers
 * each bucket's route (see above). Installed after signing, so the request
 * seen is the one sent.
 */
export function learnBucketRoutes(client: S3Client, signsPayload: (protocol: string) => boolean): void {
  const known = new Map<string, BucketRoute>();
  routes.set(client, known);
  payloadPolicies.set(client, signsPayload);
  const learn: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next, context) => async (args) => {
    const input = args.input as { Bucket?: string; Key?: string };
    const request = args.request as HttpRequest | undefined;
    if (request && input.Bucket && input.Key && LEARN_FROM.has(context.commandName ?? "") && !known.has(input.Bucket)) {
      const route = routeOf(request, input.Key);
      if (route) known.set(input.Bucket, route);
    }
    return next(args);
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

/**
 * Sends a GET for `key` with the given headers (Range, If-Match, …), signed
 * with the client's credentials, through the client's request handler. Like `send`,
 * it takes the attempt's routing hints synchronously, before any await.
 */
export function directGet(client: S3Client, bucket: string, key: string, headers: Record<string, string>, signal?: AbortSignal): Promise<DirectResponse> {
  return directRequest(client, "GET", bucket, key, headers, undefined, signal, undefined, "read");
}

/**
 * Sends a PUT of `body` to `key` with the given headers (Content-Type,
 * x-amz-meta-*, x-amz-storage-class, x-amz-checksum-*), its payload hashed
 * into the signature or not as the client's --payload-signing says.
 */
export function directPut(client: S3Client, bucket: string, key: string, headers: Record<string, string>, body: Buffer, signal?: AbortSignal): Promise<DirectResponse> {
  return directRequest(client, "PUT", bucket, key, headers, body, signal, undefined, "write");
}

/**
 * Sends one part of a multipart upload (UploadPart): a PUT to the object's
 * path with partNumber and uploadId, headers and payload hash as directPut.
 */
export function directUploadPart(client: S3Client, bucket: string, key: string, uploadId: string, partNumber: number, headers: Record<string, string>, body: Buffer, signal?: AbortSignal): Promise<DirectResponse> {
  return directRequest(client, "PUT", bucket, key, headers, body, signal, { partNumber: String(partNumber), uploadId }, "write");
}

/** What a CopyObject sends as payload: nothing, with Content-Length 0. */
const NO_BODY = Buffer.alloc(0);

/**
 * Sends a CopyObject: a PUT to the destination `key` with x-amz-copy-source
 * and the given headers (metadata directive, Content-Type, x-amz-meta-*,
 * x-amz-storage-class, x-amz-copy-source-if-match) and no payload. Resolves
 * once the copy is done; S3 may still fail it after answering 200, in the
 * body (copyFailure).
 */
export async function directCopy(client: S3Client, bucket: string, key: string, headers: Record<string, string>, signal?: AbortSignal): Promise<void> {
  const response = await directRequest(client, "PUT", bucket, key, headers, NO_BODY, signal, undefined, "copy");
  const failure = copyFailure(response.statusCode, response.headers, await textOf(response.body));
  if (failure) throw failure;
}

/**
 * The error a CopyObject answer stands for, if any. S3
 * sends the 200 status before the copy is done, so a copy that fails late
 * answers 200 with an <Error> document, or with nothing if the connection
 * was cut: both are errors, with status 503 as the SDK makes them (retried
 * as a server's failure), an empty answer an InternalError.
 */
export function copyFailure(statusCode: number, headers: Record<string, string>, text: string): Error | undefined {
  if (statusCode !== 200) return errorFromText(statusCode, headers, text);
  if (text.length === 0) return errorFromText(503, headers, "<Error><Code>InternalError</Code><Message>the copy ended without an answer</Message></Error>");
  if (text.trimEnd().endsWith("</Error>")) return errorFromText(503, headers, text);
  return undefined;
}

async function directRequest(
  client: S3Client,
  method: "GET" | "PUT",
  bucket: string,
  key: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  signal?: AbortSignal,
  query?: Record<string, string>,
  kind: RequestKind = "other",
): Promise<DirectResponse> {
  const routing = takeStartingRouting();
  const route = routes.get(client)?.get(bucket);
  if (!route) throw new Error(`no direct route known for bucket ${bucket}`);
  let payloadHash = EMPTY_SHA256;
  if (body) payloadHash = (payloadPolicies.get(client)?.(route.protocol) ?? true) ? createHash("sha256").update(body).digest("hex") : "UNSIGNED-PAYLOAD";
  const config = client.config as unknown as DirectConfig;
  const path = route.base + encodeKey(key);
  const sent: Record<string, string> = {
    host: route.port === undefined ? route.hostname : `${route.hostname}:${route.port}`,
    "x-amz-content-sha256": payloadHash,
    ...(body ? { "content-length": String(body.length) } : {}),
    ...headers,
    ...extraHeaders(client, kind),
  };
  const credentials = await config.credentials();
  // The SDK's clock correction (learnt from a RequestTimeTooSkewed answer) applies here too.
  await signHeaders(method, path, sent, credentials, route.signingRegion, "s3", Date.now() + (config.systemClockOffset ?? 0), query);
  const signed = new HttpRequest({ protocol: route.protocol, hostname: route.hostname, port: route.port, method, path, query, headers: sent, body });
  if (routing) attachRouting(signed, routing);
  // A hedged attempt has a signal of its own, linked to the caller's (net/routing.ts).
  const abortSignal = routing?.signal ?? signal;
  const { response } = await config.requestHandler.handle(signed, abortSignal ? { abortSignal } : undefined);
  return { statusCode: response.statusCode, headers: lowerCased(response.headers), body: response.body };
}

/**
 * The error a non-2xx answer stands for, shaped as the SDK's errors are (name
 * and Code from the XML, $metadata.httpStatusCode), so retries and messages
 * treat it the same (s3/errors.ts). The body is read to the end, which also
 * frees the connection for the next request.
 */
export async function errorOf(response: DirectResponse): Promise<Error> {
  return errorFromText(response.statusCode, response.headers, await textOf(response.body));
}

/** An S3 error document (or none) as an SDK-shaped error (see errorOf). */
function errorFromText(statusCode: number, headers: Record<string, string>, text: string): Error {
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
  return Object.assign(new Error(message || code || `HTTP ${statusCode}`), {
    name: code || "Unknown",
    Code: code,
    $fault: statusCode >= 500 ? "server" : "client",
    $metadata: { httpStatusCode: statusCode, requestId: headers["x-amz-request-id"] },
  });
}

async function textOf(body: unknown): Promise<string> {
  return (await readAll(body)).toString("utf8");
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

function lowerCased(headers: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}
