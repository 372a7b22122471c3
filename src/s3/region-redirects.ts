import type { S3Client, ServiceInputTypes, ServiceOutputTypes } from "@aws-sdk/client-s3";
import type { FinalizeRequestMiddleware, InitializeMiddleware } from "@smithy/types";

/**
 * Buckets that live in another region than the one a run signs for.
 *
 * S3 turns away a request signed for the wrong region: 301 PermanentRedirect
 * with the bucket's region in x-amz-bucket-region, or 400
 * AuthorizationHeaderMalformed naming it in the XML body's <Region> (a
 * regional endpoint, and Swift, answer so). aws-cli (botocore's
 * S3RegionRedirectorv2) then signs the request again for that region, sends
 * it once more, and remembers the region per bucket for the rest of the run;
 * s3x does the same, for requests through the SDK (an endpoint provider
 * that resolves a known bucket's region, and a middleware that retries once)
 * and for those it signs itself (s3/request.ts asks `regionOf`).
 *
 * Where s3x differs: when neither the header nor the body names a region,
 * botocore sends a HeadBucket to find it; s3x reports the error instead.
 */
export class BucketRegions {
  private readonly regions = new Map<string, string>();
  /** Buckets some request has had an answer for: their region is known to be the run's or learnt. */
  private readonly settled = new Set<string>();
  /** For a bucket not settled yet: the first request's answer, which the others wait for. */
  private readonly firstAnswers = new Map<string, { answered: Promise<void>; settle: () => void }>();

  /** The region learnt for `bucket`, if S3 redirected one of its requests. */
  regionOf(bucket: string): string | undefined {
    return this.regions.get(bucket);
  }

  learn(bucket: string, region: string): void {
    this.regions.set(bucket, region);
    this.settle(bucket);
  }

  /**
   * Runs `send` for `bucket`; while no request for the bucket has been
   * answered, one goes alone and the others wait for its answer (or its
   * redirect), so that a bucket in another region costs one redirect, not
   * one per request of the first concurrent batch (25 of 25 uploads of a
   * `cp -r` were turned away without this). The wait is one request's time,
   * once per bucket per run.
   */
  async inTurn<T>(bucket: string, send: () => Promise<T>): Promise<T> {
    if (this.settled.has(bucket)) return send();
    const first = this.firstAnswers.get(bucket);
    if (first) {
      await first.answered;
      return send();
    }
    let settle = () => {};
    const answered = new Promise<void>((resolve) => (settle = resolve));
    this.firstAnswers.set(bucket, { answered, settle });
    try {
      return await send();
    } finally {
      this.settle(bucket);
    }
  }

  private settle(bucket: string): void {
    this.settled.add(bucket);
    this.firstAnswers.get(bucket)?.settle();
    this.firstAnswers.delete(bucket);
  }
}

/** Where a client's BucketRegions hangs: on its configuration, one per connection. */
const BUCKET_REGIONS = Symbol("s3x.bucketRegions");

interface RedirectConfig {
  [BUCKET_REGIONS]?: BucketRegions;
  region: () => Promise<string>;
  endpointProvider: (params: Record<string, unknown>, context?: unknown) => unknown;
}

/** The bucket regions learnt on `client`'s connection (none when redirects are not followed). */
export function bucketRegionsOf(client: S3Client): BucketRegions | undefined {
  return (client.config as unknown as RedirectConfig)[BUCKET_REGIONS];
}

/** The region a request for `bucket` is signed for: the learnt one, else the client's. */
export async function signingRegionFor(client: S3Client, bucket: string): Promise<string> {
  return bucketRegionsOf(client)?.regionOf(bucket) ?? (await (client.config as unknown as RedirectConfig).region());
}

/** The region one command's request is to be signed for, carried from its input to its request. */
const SIGN_FOR = Symbol("s3x.signFor");
type Pinned = { [SIGN_FOR]?: string };

interface AuthScheme {
  schemeId: string;
  signer: { sign(request: unknown, identity: unknown, properties: Record<string, unknown>): Promise<unknown> };
}

/**
 * Follows region redirects on `client`'s SDK commands: a request turned
 * away for its region is sent once more, signed for the region S3 named, and
 * later requests for that bucket are signed for it from the start. The
 * client's configuration itself never changes (other buckets keep the run's
 * region): the bucket's region replaces the client's in endpoint resolution
 * (on AWS the regional host follows it), and is handed to the signer with
 * the request itself. It cannot travel in the SDK's handler context: with
 * cacheMiddleware every command of a kind shares one context, so concurrent
 * requests would overwrite each other's signing region there.
 */
export function followRegionRedirects(client: S3Client): BucketRegions {
  const regions = new BucketRegions();
  const config = client.config as unknown as RedirectConfig & { httpAuthSchemes?: AuthScheme[] };
  config[BUCKET_REGIONS] = regions;
  const resolveEndpoint = config.endpointProvider;
  config.endpointProvider = (params, context) => {
    const region = typeof params.Bucket === "string" ? regions.regionOf(params.Bucket) : undefined;
    return resolveEndpoint(region ? { ...params, Region: region } : params, context);
  };
  config.httpAuthSchemes = config.httpAuthSchemes?.map((scheme) => (scheme.schemeId === "aws.auth#sigv4" ? { ...scheme, signer: pinnedSigner(scheme.signer) } : scheme));

  const retryInRegion: InitializeMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next, context) => async (args) => {
    const input = args.input as { Bucket?: string } & Pinned;
    const bucket = input.Bucket;
    if (!bucket) return next(args);
    return regions.inTurn(bucket, async () => {
      const learnt = regions.regionOf(bucket);
      if (learnt !== undefined) pin(input, learnt);
      try {
        return await next(args);
      } catch (err) {
        const region = redirectRegion(err, context.commandName ?? "");
        // A region S3 named that this request was not signed for: once more, there.
        if (region === undefined || region === (learnt ?? (await config.region()))) throw err;
        regions.learn(bucket, region);
        pin(input, region);
        return next(args);
      }
    });
  };
  client.middlewareStack.add(retryInRegion, { step: "initialize", name: "s3xRegionRedirect", priority: "high" });
  const carryPin: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => async (args) => {
    const region = (args.input as Pinned)[SIGN_FOR];
    if (region !== undefined && args.request) pin(args.request as Pinned, region);
    return next(args);
  };
  client.middlewareStack.addRelativeTo(carryPin, { relation: "before", toMiddleware: "httpSigningMiddleware", name: "s3xCarrySigningRegion" });
  return regions;
}

function pin(carrier: Pinned, region: string | undefined): void {
  Object.defineProperty(carrier, SIGN_FOR, { value: region, enumerable: true, configurable: true, writable: true });
}

/** A SigV4 signer that signs a request carrying a pinned region for that region (its own copy of the properties). */
function pinnedSigner(inner: AuthScheme["signer"]): AuthScheme["signer"] {
  const signer = Object.create(inner) as AuthScheme["signer"];
  signer.sign = (request, identity, properties) => {
    const region = (request as Pinned)[SIGN_FOR];
    return inner.sign(request, identity, region === undefined ? properties : { ...properties, signingRegion: region, signing_region: region });
  };
  return signer;
}

interface RedirectErrorShape {
  name?: string;
  Code?: string;
  Region?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
}

/** The region an SDK error says the bucket lives in, when it is a region redirect (as botocore decides). */
export function redirectRegion(err: unknown, commandName: string): string | undefined {
  const e = (err ?? {}) as RedirectErrorShape;
  const status = e.$metadata?.httpStatusCode;
  if (status === undefined) return undefined;
  const headers = e.$response?.headers ?? {};
  const header = headers["x-amz-bucket-region"] ?? headers["X-Amz-Bucket-Region"];
  const code = e.Code ?? e.name;
  // A bucket created with a region the endpoint does not serve is the user's error, not a redirect.
  if (commandName === "CreateBucketCommand") return undefined;
  return regionOfRedirect(status, code, header, e.Region, commandName === "HeadObjectCommand" || commandName === "HeadBucketCommand");
}

/** Statuses a redirect comes with (S3 uses 301; 302 and 307 as botocore accepts them; 400 for a wrong signing region). */
const REDIRECT_STATUSES = new Set([301, 302, 307, 400]);

/**
 * The region a failed answer redirects to, or undefined when it is no region
 * redirect: botocore's conditions (a redirect status, PermanentRedirect,
 * AuthorizationHeaderMalformed with a Region, IllegalLocationConstraintException,
 * a HEAD's bodiless 301 or 400), the region from x-amz-bucket-region, else the body's <Region>.
 */
export function regionOfRedirect(status: number, code: string | undefined, headerRegion: string | undefined, bodyRegion: string | undefined, isHead: boolean): string | undefined {
  if (!REDIRECT_STATUSES.has(status)) return undefined;
  const redirect =
    status !== 400 ||
    code === "AuthorizationHeaderMalformed" ||
    code === "IllegalLocationConstraintException" ||
    code === "PermanentRedirect" ||
    isHead;
  if (!redirect) return undefined;
  const region = headerRegion || bodyRegion;
  return region ? region : undefined;
}

/** Whether a direct request's answer may be a region redirect (its body is then read to tell). */
export function mayRedirect(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

/** The <Code> and <Region> of an S3 error document. */
export function errorCodeAndRegion(xml: string): { code?: string; region?: string } {
  return { code: /<Code>([^<]*)<\/Code>/.exec(xml)?.[1], region: /<Region>([^<]*)<\/Region>/.exec(xml)?.[1] };
}
