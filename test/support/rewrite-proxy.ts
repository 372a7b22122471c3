import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A FAKE: an HTTP proxy in front of the real S3 server that rewrites the
 * body of ListObjectsV2 answers (GET with list-type=2) and ListMultipartUploads
 * answers (GET ?uploads) before passing them on, for what no real server here
 * does: well-formed XML spelled unusually (`<Contents xmlns="">`,
 * `<Contents >`), or a listing that contradicts itself (a KeyCount that does
 * not match its keys, a key outside the prefix that was asked for). The
 * rewrite sees the request's query (prefix, start-after, uploads…) so it can
 * twist only some answers. Every other request and answer is relayed
 * untouched; every byte comes from the real server, and requests keep their
 * Host header, so their signatures still verify.
 */
export interface RewriteProxy {
  endpoint: string;
  /** How listing answers are rewritten from now on (identity to stop); `query` is the listing request's. */
  setRewrite(rewrite: ListingRewrite): void;
  /** Listing answers rewritten so far (the rewrite changed their body). */
  rewritten: number;
  close(): Promise<void>;
}

export type ListingRewrite = (xml: string, query: URLSearchParams) => string;

export interface RewriteProxyOptions {
  /**
   * Keep idle keep-alive connections from s3x open until s3x closes them
   * (Node's server closes them after 5 s, radosgw after ~65 s, some relays
   * never): a run that leaves one open then cannot exit by itself.
   */
  holdIdleConnections?: boolean;
}

export async function startRewriteProxy(targetHost: string, targetPort: number, options: RewriteProxyOptions = {}): Promise<RewriteProxy> {
  let rewrite: ListingRewrite = (xml) => xml;
  const state = { rewritten: 0 };

  const relay = (req: IncomingMessage, res: ServerResponse): void => {
    const upstream = request({ host: targetHost, port: targetPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const query = new URL(req.url ?? "/", "http://x").searchParams;
      // ListObjectsV2, and ListMultipartUploads (GET ?uploads).
      const isListing = req.method === "GET" && (query.get("list-type") === "2" || query.has("uploads")) && answer.statusCode === 200;
      if (!isListing) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on("data", (c: Buffer) => chunks.push(c));
      answer.on("end", () => {
        const original = Buffer.concat(chunks).toString("utf8");
        const changed = rewrite(original, query);
        if (changed !== original) state.rewritten++;
        const body = Buffer.from(changed, "utf8");
        const headers = { ...answer.headers, "content-length": String(body.length) };
        delete headers["transfer-encoding"];
        res.writeHead(answer.statusCode ?? 200, headers);
        res.end(body);
      });
      answer.on("error", () => res.destroy());
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  };

  const server: Server = createServer(relay);
  if (options.holdIdleConnections) server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    setRewrite(next) {
      rewrite = next;
    },
    get rewritten() {
      return state.rewritten;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
