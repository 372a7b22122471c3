import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A FAKE: an HTTP proxy in front of the real S3 server that plays S3 for
 * buckets living in other regions. radosgw accepts a signature scoped to
 * any region, so it cannot show what S3 does to a request signed for the
 * wrong one; this proxy can. For a path-style request to a bucket given a
 * region here, it reads the region of the signature (the Authorization
 * header's credential scope, or a presigned URL's X-Amz-Credential) and,
 * when that is not the bucket's region, answers as S3 does:
 *  - "permanent-redirect": 301 PermanentRedirect, the region in
 *    x-amz-bucket-region and the XML error (which names an Endpoint, no Region);
 *  - "malformed-authorization": 400 AuthorizationHeaderMalformed with the
 *    region only in the XML body's <Region> (as S3 answers a regional
 *    endpoint, and Swift does), except HEAD, whose answer has no body: the
 *    header then.
 * Requests signed for the right region, and buckets with no region here,
 * are relayed untouched (Host header kept, so signatures still verify).
 */
export type RedirectStyle = "permanent-redirect" | "malformed-authorization";

export interface RegionRedirectingProxy {
  endpoint: string;
  /** Makes `bucket` live in `region` (signatures scoped elsewhere are turned away). */
  placeBucket(bucket: string, region: string): void;
  style: RedirectStyle;
  /** Requests turned away so far, per bucket. */
  redirects: Map<string, number>;
  /** Requests relayed to the real server so far, per bucket. */
  relayed: Map<string, number>;
  close(): Promise<void>;
}

const SCOPE = /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/;

function requestRegion(req: IncomingMessage, url: URL): string | undefined {
  const fromHeader = SCOPE.exec(req.headers.authorization ?? "")?.[1];
  if (fromHeader) return fromHeader;
  return /^[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request$/.exec(url.searchParams.get("X-Amz-Credential") ?? "")?.[1];
}

function bump(counts: Map<string, number>, bucket: string): void {
  counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
}

export async function startRegionRedirectingProxy(targetHost: string, targetPort: number): Promise<RegionRedirectingProxy> {
  const regions = new Map<string, string>();
  const state: Pick<RegionRedirectingProxy, "style" | "redirects" | "relayed"> = { style: "permanent-redirect", redirects: new Map(), relayed: new Map() };

  const turnAway = (req: IncomingMessage, res: ServerResponse, bucket: string, region: string, signedFor: string): void => {
    bump(state.redirects, bucket);
    const head = req.method === "HEAD";
    let status: number;
    let xml: string;
    const headers: Record<string, string> = { "content-type": "application/xml", "x-amz-request-id": "FAKE" };
    if (state.style === "permanent-redirect") {
      status = 301;
      headers["x-amz-bucket-region"] = region;
      xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed using the specified endpoint. Please send all future requests to this endpoint.</Message><Endpoint>${bucket}.s3.${region}.amazonaws.com</Endpoint><Bucket>${bucket}</Bucket><RequestId>FAKE</RequestId></Error>`;
    } else {
      status = 400;
      if (head) headers["x-amz-bucket-region"] = region;
      xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AuthorizationHeaderMalformed</Code><Message>The authorization header is malformed; the region '${signedFor}' is wrong; expecting '${region}'</Message><Region>${region}</Region><RequestId>FAKE</RequestId></Error>`;
    }
    const body = head ? Buffer.alloc(0) : Buffer.from(xml, "utf8");
    headers["content-length"] = String(head ? Buffer.byteLength(xml) : body.length);
    // The request's own body is read to its end first, so the connection stays usable.
    req.resume();
    req.on("end", () => {
      res.writeHead(status, headers);
      res.end(body);
    });
  };

  const relay = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://proxy");
    const bucket = decodeURIComponent(url.pathname.split("/")[1] ?? "");
    const region = regions.get(bucket);
    const signedFor = requestRegion(req, url);
    if (region !== undefined && signedFor !== undefined && signedFor !== region) {
      turnAway(req, res, bucket, region, signedFor);
      return;
    }
    if (bucket) bump(state.relayed, bucket);
    const upstream = request({ host: targetHost, port: targetPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  };

  const server: Server = createServer(relay);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    placeBucket(bucket, region) {
      regions.set(bucket, region);
    },
    get style() {
      return state.style;
    },
    set style(style: RedirectStyle) {
      state.style = style;
    },
    redirects: state.redirects,
    relayed: state.relayed,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
