/**
 * Buckets that live in another region than the one a run signs for.
 *
 * S3 turns away a request signed for the wrong region: 301 PermanentRedirect
 * with the bucket's region in x-amz-bucket-region, or 400
 * AuthorizationHeaderMalformed naming it in the XML body's <Region> (a
 * regional endpoint, and Swift, answer so). aws-cli (botocore's
 * S3RegionRedirectorv2) then signs the request again for that region, sends
 * it once more, and remembers the region per bucket for the rest of the run;
 * s3x does the same (s3/request.ts), one BucketRegions per connection.
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

  /**
   * What this requester knows of `bucket`, for another thread's requester
   * (engine/workers): whether a request for it was answered, and the region
   * learnt from a redirect.
   */
  knowledgeOf(bucket: string): { settled: boolean; region?: string } {
    return { settled: this.settled.has(bucket), region: this.regions.get(bucket) };
  }

  /** Takes what another thread's requester knew of `bucket` (knowledgeOf): no second redirect, no wait for a first answer. */
  adopt(bucket: string, known: { settled: boolean; region?: string }): void {
    if (known.region !== undefined) this.learn(bucket, known.region);
    else if (known.settled) this.settle(bucket);
  }

  private settle(bucket: string): void {
    this.settled.add(bucket);
    this.firstAnswers.get(bucket)?.settle();
    this.firstAnswers.delete(bucket);
  }
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
