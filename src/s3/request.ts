import { createHash } from "node:crypto";
import type { WireRequest, WireSender } from "../net/transport.js";
import type { AttemptRouting } from "../net/routing.js";
import type { ResponseBody } from "../net/response-body.js";
import { needsFreshConnection } from "../net/nagle-workaround.js";
import { readAll } from "./body.js";
import { Signers, canonicalQuery, signHeaders, type SigningCredentials } from "./sigv4.js";
import { headersFor, type RequestKind, type RequestSettings } from "./request-headers.js";
import { endpointOf, routeOf, type Endpoint, type EndpointSettings, type Route } from "./route.js";
import { BucketRegions, errorCodeAndRegion, mayRedirect, regionOfRedirect } from "./region-redirects.js";
import { signsPayloadUnder, type PayloadSigning } from "./payload-signing.js";
import { errorFromText } from "./errors.js";

/**
 * The one place S3 requests are sent from. Every operation (s3/object-read,
 * object-write, copy, delete, list, buckets) describes its request as an
 * S3Request and reads the S3Response; this module does the rest, in order:
 *
 *   route (s3/route.ts: computed from the settings and the bucket's region)
 *   → headers (payer and SSE-C by kind, payload hash, host, user agent)
 *   → sign (@smithy/signature-v4, one signer per credentials and region, kept)
 *   → transport (net/transport.ts: address choice, s3x's HTTP/1.1 client)
 *   → S3Response, or the S3 error a non-2xx answer stands for.
 *
 * A bucket in another region is followed as aws-cli does
 * (s3/region-redirects.ts). A clock the server finds skewed is corrected
 * from its Date header and the request sent once more. Everything a
 * connection learns lives on its S3Requester: no module-level state, so a
 * requester can live in any thread.
 */

/** One S3 request, as an operation describes it. */
export interface S3Request {
  /** The S3 operation's name (GetObject, ListParts, …): error messages and redirect rules. */
  operation: string;
  method: WireRequest["method"];
  bucket?: string;
  key?: string;
  /** Query parameters, unencoded ("uploads": ""). */
  query?: Record<string, string>;
  /** Lower-case names. */
  headers?: Record<string, string>;
  body?: Buffer;
  /**
   * What the body is: object bytes ("data", hashed into the signature as
   * --payload-signing says) or a document s3x wrote (always hashed).
   */
  payload?: "data" | "document";
  /** Which SSE-C key headers the request needs (s3/request-headers.ts). */
  kind?: RequestKind;
  /** The body's x-amz-checksum-* is one the server has shown it verifies (s3/payload-signing.ts). */
  checksumChecked?: boolean;
  /** Bytes a ranged GET asks for: the straggler watch's yardstick. */
  expectedBytes?: number;
}

/** What every operation may be given: a signal that cancels it, and the attempt's routing. */
export interface Call {
  signal?: AbortSignal;
  /** The retry loop's routing for this attempt (net/routing.ts). */
  routing?: AttemptRouting;
}

/** A 2xx answer: status, lower-case headers, the body still arriving. */
export interface S3Response {
  statusCode: number;
  headers: Record<string, string>;
  body: ResponseBody;
}

/** A credential provider: cheap to call, refreshing what expires (the SDK's chain, s3/credentials.ts). */
export type CredentialSource = () => Promise<SigningCredentials>;

export interface RequesterSettings {
  endpoint: EndpointSettings;
  /** Undefined: anonymous requests (--no-sign-request), sent unsigned. */
  credentials?: CredentialSource;
  payloadSigning: PayloadSigning;
  /** --request-payer and SSE-C keys. */
  requests?: RequestSettings;
}

/** SHA-256 of an empty payload. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** Sent as User-Agent on every request; built once. */
const USER_AGENT = `s3x lang/js md/nodejs#${process.versions.node} os/${process.platform}`;

/** Codes of a request refused for its clock; the server's Date then tells the offset. */
const CLOCK_SKEW_CODES = new Set(["RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture"]);
/** A skew smaller than this is not the cause (SigV4 allows 15 minutes). */
const SKEW_WORTH_CORRECTING_MS = 4 * 60_000;

export class S3Requester {
  /** Buckets that live in another region than the run's (learnt from redirects). */
  readonly regions = new BucketRegions();
  private readonly signers = new Signers();
  /** The endpoint, its URL parsed once. */
  private readonly endpoint: Endpoint;
  /** Server time minus local time, learnt from a clock-skew refusal. */
  private clockOffsetMs = 0;

  constructor(
    readonly settings: RequesterSettings,
    private readonly transport: WireSender,
  ) {
    this.endpoint = endpointOf(settings.endpoint);
  }

  /** The region requests for `bucket` are signed for: the learnt one, else the run's. */
  regionOf(bucket: string | undefined): string {
    return (bucket === undefined ? undefined : this.regions.regionOf(bucket)) ?? this.settings.endpoint.region;
  }

  /** Where a request for `bucket`/`key` goes now. */
  routeOf(bucket?: string, key?: string): Route {
    return routeOf(this.endpoint, this.regionOf(bucket), bucket, key);
  }

  /** The run's credentials (undefined when anonymous) and the server-corrected clock. */
  async signingCredentials(): Promise<SigningCredentials | undefined> {
    return this.settings.credentials?.();
  }

  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  get signerCache(): Signers {
    return this.signers;
  }

  /**
   * Sends `req` and resolves with its 2xx answer; any other answer is read
   * and thrown as the S3 error it stands for (s3/errors.ts).
   */
  async send(req: S3Request, call: Call = {}): Promise<S3Response> {
    const bucket = req.bucket;
    // A bucket created with a region the endpoint does not serve is the user's error, not a redirect.
    if (bucket === undefined || req.operation === "CreateBucket") return this.answerOf(req, call, this.regionOf(bucket));
    return this.regions.inTurn(bucket, () => this.answerOf(req, call, this.regionOf(bucket)));
  }

  private async answerOf(req: S3Request, call: Call, region: string, redirected = false): Promise<S3Response> {
    let answer = await this.sendSigned(req, call, region);
    if (answer.statusCode < 300) return answer;
    let text = (await readAll(answer.body)).toString("utf8");
    const { code, region: bodyRegion } = errorCodeAndRegion(text);
    if (!redirected && req.bucket !== undefined && req.operation !== "CreateBucket" && mayRedirect(answer.statusCode)) {
      // S3 turned the request away for its region: learnt for the bucket, and sent once more, signed for it.
      const redirectedTo = regionOfRedirect(answer.statusCode, code, answer.headers["x-amz-bucket-region"], bodyRegion, req.method === "HEAD");
      if (redirectedTo !== undefined && redirectedTo !== region) {
        this.regions.learn(req.bucket, redirectedTo);
        return this.answerOf(req, call, redirectedTo, true);
      }
    }
    if (code !== undefined && CLOCK_SKEW_CODES.has(code) && this.learnClock(answer.headers.date)) {
      answer = await this.sendSigned(req, call, region);
      if (answer.statusCode < 300) return answer;
      text = (await readAll(answer.body)).toString("utf8");
    }
    throw errorFromText(answer.statusCode, answer.headers, text, req.operation);
  }

  /** Takes the server's clock from its Date header; true when the offset changed enough to try again. */
  private learnClock(date: string | undefined): boolean {
    const server = date === undefined ? NaN : Date.parse(date);
    if (Number.isNaN(server)) return false;
    const offset = server - Date.now();
    if (Math.abs(offset - this.clockOffsetMs) < SKEW_WORTH_CORRECTING_MS) return false;
    this.clockOffsetMs = offset;
    return true;
  }

  private async sendSigned(req: S3Request, call: Call, region: string): Promise<S3Response> {
    const route = routeOf(this.endpoint, region, req.bucket, req.key);
    const query = req.query ?? {};
    const headers: Record<string, string> = { host: route.host, "user-agent": USER_AGENT, ...req.headers };
    if (this.settings.requests) Object.assign(headers, headersFor(this.settings.requests, req.kind ?? "other"));
    const body = req.body;
    if (body !== undefined && (body.length > 0 || req.method === "PUT" || req.method === "POST")) headers["content-length"] = String(body.length);
    const credentials = await this.signingCredentials();
    if (credentials) {
      headers["x-amz-content-sha256"] = this.payloadHash(req, route.protocol);
      await signHeaders(req.method, route.path, headers, credentials, region, "s3", this.now(), query, this.signers);
    }
    const queryText = canonicalQuery(query);
    const path = queryText ? `${route.path}?${queryText}` : route.path;
    // A hedged attempt has a signal of its own, linked to the caller's (net/routing.ts).
    const signal = call.routing?.signal ?? call.signal;
    const wire: WireRequest = { protocol: route.protocol, hostname: route.hostname, port: route.port, method: req.method, path, headers, body };
    return this.transport.send(wire, { signal, routing: call.routing, expectedBytes: req.expectedBytes, fresh: needsFreshConnection(req.method, query, headers) });
  }

  private payloadHash(req: S3Request, protocol: string): string {
    const body = req.body;
    if (body === undefined || body.length === 0) return EMPTY_SHA256;
    if (req.payload === "data" && !signsPayloadUnder(this.settings.payloadSigning, protocol, req.checksumChecked === true)) return "UNSIGNED-PAYLOAD";
    return createHash("sha256").update(body).digest("hex");
  }
}

/** Reads a 2xx answer's body to its end as text (an XML document), freeing the connection. */
export async function textOf(response: S3Response): Promise<string> {
  return (await readAll(response.body)).toString("utf8");
}

/** Reads a body to its end and drops it: frees the connection for the next request. */
export async function drain(response: S3Response): Promise<void> {
  for await (const _ of response.body);
}
