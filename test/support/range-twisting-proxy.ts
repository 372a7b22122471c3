import { createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A FAKE: a relay in front of the real radosgw that twists some answers the
 * way caches, proxies and some S3-compatible servers do, which radosgw
 * itself never does:
 *
 *  - "slow-down": answers 503 SlowDown itself (the request is not forwarded);
 *  - "access-denied": answers 403 AccessDenied itself (not forwarded): a
 *    failure no retry mends;
 *  - "wrong-range": answers a ranged GET with 206 and the right number of
 *    bytes, but from the object's start, and a Content-Range that says so
 *    (`bytes 0-…/total`): a cache that serves the range it holds;
 *  - "whole-object": answers a ranged GET with 200 and the whole object, as
 *    a relay that drops the Range header does;
 *  - "long-body": answers a ranged GET with 206 and the right Content-Range,
 *    chunked (no Content-Length), with the range's bytes and then more.
 *
 * Every other request and answer is relayed untouched, Host header
 * included, so SigV4 signatures still verify. A twisted GET is still sent
 * to radosgw (its status, ETag and If-Match check are radosgw's own); only
 * its body is replaced, with bytes of the object the test gave the relay
 * (`knowObject`): the relay cannot ask radosgw for another range, the Range
 * header being signed.
 */
export type Twist = "slow-down" | "access-denied" | "wrong-range" | "whole-object" | "long-body";

/** What the relay sees of a request when deciding whether to twist its answer. */
export interface RelayedRequest {
  method: string;
  /** Path and query string. */
  path: string;
  /** The Range header's first and last byte, when there is one. */
  range?: { start: number; end: number };
}

export interface RangeTwistingProxy {
  endpoint: string;
  /** Decides, per request, how its answer is twisted (default: never). */
  twist: (req: RelayedRequest) => Twist | undefined;
  /** The bytes of the object at `path` ("/bucket/key"), for the twists that answer other bytes. */
  knowObject(path: string, data: Buffer): void;
  /** Answers twisted so far, by kind. */
  twisted: Record<Twist, number>;
  /** Requests seen so far, by method. */
  seen: Record<string, number>;
  close(): Promise<void>;
}

export const SLOW_DOWN_XML = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';
const ACCESS_DENIED_XML = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';

/** The answers the relay gives itself, without forwarding the request. */
const CANNED: Partial<Record<Twist, { status: number; body: string }>> = {
  "slow-down": { status: 503, body: SLOW_DOWN_XML },
  "access-denied": { status: 403, body: ACCESS_DENIED_XML },
};

/**
 * A twist for a SlowDown storm: `fraction` of all requests are refused with
 * SlowDown (a seeded random choice, so a run can be replayed), but never
 * the same request (method, path, range) more than `maxInARow` times
 * running, so a client with more attempts than that must always finish.
 */
export function slowDownStorm(fraction: number, seed: number, maxInARow: number): (req: RelayedRequest) => Twist | undefined {
  let state = seed >>> 0;
  // mulberry32: small, seedable, good enough to spread refusals.
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const refusedInARow = new Map<string, number>();
  return (req) => {
    const id = `${req.method} ${req.path} ${req.range ? `${req.range.start}-${req.range.end}` : ""}`;
    const row = refusedInARow.get(id) ?? 0;
    if (row < maxInARow && random() < fraction) {
      refusedInARow.set(id, row + 1);
      return "slow-down";
    }
    refusedInARow.delete(id);
    return undefined;
  };
}

function rangeOf(header: string | string[] | undefined): { start: number; end: number } | undefined {
  const match = typeof header === "string" ? /^bytes=(\d+)-(\d+)$/.exec(header) : null;
  return match ? { start: Number(match[1]), end: Number(match[2]) } : undefined;
}

export async function startRangeTwistingProxy(targetHost: string, targetPort: number): Promise<RangeTwistingProxy> {
  const objects = new Map<string, Buffer>();
  const proxy: Pick<RangeTwistingProxy, "twist" | "twisted" | "seen"> = {
    twist: () => undefined,
    twisted: { "slow-down": 0, "access-denied": 0, "wrong-range": 0, "whole-object": 0, "long-body": 0 },
    seen: {},
  };

  /** The body and headers that replace radosgw's answer to a twisted GET. */
  const twistedAnswer = (twist: Twist, data: Buffer, range: { start: number; end: number }, headers: OutgoingHttpHeaders): { status: number; body: Buffer } => {
    delete headers["content-range"];
    delete headers["transfer-encoding"];
    if (twist === "whole-object") {
      headers["content-length"] = String(data.length);
      return { status: 200, body: data };
    }
    const length = Math.min(range.end, data.length - 1) - range.start + 1;
    if (twist === "long-body") {
      delete headers["content-length"];
      headers["content-range"] = `bytes ${range.start}-${range.start + length - 1}/${data.length}`;
      // The range's true bytes, then as many again from the object's start: more than the range holds.
      return { status: 206, body: Buffer.concat([data.subarray(range.start, range.start + length), data.subarray(0, length)]) };
    }
    headers["content-range"] = `bytes 0-${length - 1}/${data.length}`;
    headers["content-length"] = String(length);
    return { status: 206, body: data.subarray(0, length) };
  };

  const relay = (incoming: IncomingMessage, outgoing: ServerResponse, twist: Twist | undefined, range: { start: number; end: number } | undefined): void => {
    const path = new URL(incoming.url ?? "/", "http://relay").pathname;
    const data = objects.get(decodeURIComponent(path));
    const twisting = twist !== undefined && range !== undefined && data !== undefined;
    const upstream = httpRequest({ host: targetHost, port: targetPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (reply) => {
      if (!twisting || reply.statusCode !== 206) {
        outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(outgoing);
        return;
      }
      reply.resume();
      reply.on("end", () => {
        const headers: OutgoingHttpHeaders = { ...reply.headers };
        const answer = twistedAnswer(twist, data, range, headers);
        proxy.twisted[twist]++;
        outgoing.writeHead(answer.status, headers);
        outgoing.end(answer.body);
      });
      reply.on("error", () => outgoing.destroy());
    });
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  };

  const server: Server = createServer((incoming, outgoing) => {
    const method = incoming.method ?? "";
    proxy.seen[method] = (proxy.seen[method] ?? 0) + 1;
    const range = rangeOf(incoming.headers.range);
    const twist = proxy.twist({ method, path: incoming.url ?? "", range });
    const canned = twist && CANNED[twist];
    if (!twist || !canned) return relay(incoming, outgoing, twist, range);
    proxy.twisted[twist]++;
    incoming.resume();
    incoming.on("end", () => {
      // A HEAD answer has no body, whatever its Content-Length says.
      outgoing.writeHead(canned.status, { "content-type": "application/xml", "content-length": Buffer.byteLength(canned.body) });
      outgoing.end(method === "HEAD" ? undefined : canned.body);
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    endpoint: `http://127.0.0.1:${port}`,
    knowObject(path: string, data: Buffer): void {
      objects.set(path, data);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
