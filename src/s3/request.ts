import type { S3Client, S3ClientResolvedConfig, ServiceInputTypes, ServiceOutputTypes } from "@aws-sdk/client-s3";
import type { Command, FinalizeRequestMiddleware, HttpHandlerOptions, RequestHandler } from "@smithy/types";
import { HttpRequest, type HttpResponse } from "@smithy/core/protocols";
import { createHash } from "node:crypto";
import { attachRouting, routingOf, takeStartingRouting } from "../net/routing.js";
import { readAll } from "./body.js";
import { signHeaders, type SigningCredentials } from "./sigv4.js";
import { extraHeaders, type RequestKind } from "./request-headers.js";
import { encodeKey, lowerCased, routeFor, signsPayload, type BucketRoute } from "./bucket-routes.js";
import { bucketRegionsOf, errorCodeAndRegion, mayRedirect, regionOfRedirect } from "./region-redirects.js";
import { errorFromText } from "./errors.js";

/**
 * The one way S3 requests leave s3/: either an SDK command (`send`: the
 * SDK builds, signs and parses) or, for the object requests the engine
 * sends by the thousand, a request s3x builds and signs itself
 * (`directGet`, `directPut`, `directUploadPart`, `directCopy`). Both end in
 * the same request handler (net/http-handler.ts), which picks the address
 * and transport and keeps the books; both carry the caller's signal and the
 * retry loop's routing hints, taken synchronously before any await.
 *
 * Why s3x signs some requests itself: through the SDK, one GetObject costs
 * ~0.45 ms of CPU before and after the network (command and endpoint
 * resolution, schema serde, a dozen middleware, header parsing into an
 * output object) even with s3x's trims (s3/client.ts), and its signer
 * ~0.15 ms more; thousands of small objects are bound by that CPU on a
 * couple of cores. Once the SDK has shown where a bucket's keys live
 * (s3/bucket-routes.ts), the same headers signed with the SDK's credentials
 * and signer (s3/sigv4.ts) go out directly.
 */

/**
 * Cancellation without per-call SDK options.
 *
 * The SDK re-resolves its whole middleware stack on every `send` that
 * carries options (such as an abortSignal) — about 0.6 ms of CPU per
 * request, which dominates small-object transfers. With `cacheMiddleware`
 * and no options the resolved stack is reused, so s3x passes the signal on
 * the command input instead: a middleware copies it onto the signed request,
 * and the request handler wrapper hands it to the real handler.
 */
const CALL_SIGNAL = Symbol("s3x.callSignal");

type WithSignal = { [CALL_SIGNAL]?: AbortSignal };

/** `client.send(command)` that can be cancelled through `signal`. */
export function send<In extends ServiceInputTypes, Out extends ServiceOutputTypes>(
  client: S3Client,
  command: Command<ServiceInputTypes, In, ServiceOutputTypes, Out, S3ClientResolvedConfig>,
  signal?: AbortSignal,
): Promise<Out> {
  if (signal) Object.defineProperty(command.input, CALL_SIGNAL, { value: signal, enumerable: true, configurable: true });
  const routing = takeStartingRouting();
  if (routing) attachRouting(command.input, routing);
  return client.send(command);
}

/** Installs the middleware that carries the signal and routing hints from input to request. */
export function carrySignals(client: S3Client): void {
  const carry: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => async (args) => {
    const request = args.request as object | undefined;
    if (request) {
      const signal = (args.input as WithSignal)[CALL_SIGNAL];
      if (signal) (request as WithSignal)[CALL_SIGNAL] = signal;
      const routing = routingOf(args.input as object);
      if (routing) attachRouting(request, routing);
    }
    return next(args);
  };
  client.middlewareStack.addRelativeTo(
    carry,
    { relation: "after", toMiddleware: "httpSigningMiddleware", name: "s3xCarrySignal" },
  );
}

/** Wraps a request handler so the carried signal arrives as its abortSignal. */
export function signalAwareHandler(
  inner: RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions>,
): RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> {
  return {
    metadata: inner.metadata,
    handle: (request, options) => {
      // A hedged attempt has a signal of its own, linked to the caller's (net/routing.ts).
      const signal = routingOf(request)?.signal ?? (request as WithSignal)[CALL_SIGNAL];
      return inner.handle(request, signal && !options?.abortSignal ? { ...options, abortSignal: signal } : options);
    },
    destroy: () => inner.destroy?.(),
  };
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

/** SHA-256 of an empty payload: what the SDK signs for a GET. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

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
 * into the signature or not as the client's --payload-signing says
 * (`checksumChecked`: the server verifies the x-amz-checksum-* sent).
 */
export function directPut(client: S3Client, bucket: string, key: string, headers: Record<string, string>, body: Buffer, signal?: AbortSignal, checksumChecked = false): Promise<DirectResponse> {
  return directRequest(client, "PUT", bucket, key, headers, body, signal, undefined, "write", checksumChecked);
}

/**
 * Sends one part of a multipart upload (UploadPart): a PUT to the object's
 * path with partNumber and uploadId, headers and payload hash as directPut.
 */
export function directUploadPart(
  client: S3Client,
  bucket: string,
  key: string,
  uploadId: string,
  partNumber: number,
  headers: Record<string, string>,
  body: Buffer,
  signal?: AbortSignal,
  checksumChecked = false,
): Promise<DirectResponse> {
  return directRequest(client, "PUT", bucket, key, headers, body, signal, { partNumber: String(partNumber), uploadId }, "write", checksumChecked);
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
  checksumChecked = false,
): Promise<DirectResponse> {
  const routing = takeStartingRouting();
  const route = routeFor(client, bucket);
  if (!route) throw new Error(`no direct route known for bucket ${bucket}`);
  const regions = bucketRegionsOf(client);
  const region = regions?.regionOf(bucket) ?? route.signingRegion;
  const response = await signAndSend(client, route, region, method, key, headers, body, signal, query, kind, checksumChecked, routing);
  if (!regions || !mayRedirect(response.statusCode)) return response;
  // A region redirect (s3/region-redirects.ts): learnt for the bucket, and this request sent once more, signed for it.
  const text = (await readAll(response.body)).toString("utf8");
  const { code, region: bodyRegion } = errorCodeAndRegion(text);
  const redirectedTo = regionOfRedirect(response.statusCode, code, response.headers["x-amz-bucket-region"], bodyRegion, false);
  if (redirectedTo === undefined || redirectedTo === region) return { ...response, body: Buffer.from(text, "utf8") };
  regions.learn(bucket, redirectedTo);
  return signAndSend(client, route, redirectedTo, method, key, headers, body, signal, query, kind, checksumChecked, routing);
}

async function signAndSend(
  client: S3Client,
  route: BucketRoute,
  region: string,
  method: "GET" | "PUT",
  key: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  signal: AbortSignal | undefined,
  query: Record<string, string> | undefined,
  kind: RequestKind,
  checksumChecked: boolean,
  routing: ReturnType<typeof takeStartingRouting>,
): Promise<DirectResponse> {
  let payloadHash = EMPTY_SHA256;
  if (body) payloadHash = signsPayload(client, route.protocol, checksumChecked) ? createHash("sha256").update(body).digest("hex") : "UNSIGNED-PAYLOAD";
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
  await signHeaders(method, path, sent, credentials, region, "s3", Date.now() + (config.systemClockOffset ?? 0), query);
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

async function textOf(body: unknown): Promise<string> {
  return (await readAll(body)).toString("utf8");
}

