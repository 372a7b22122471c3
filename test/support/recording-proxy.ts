import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A request-recording HTTP proxy in front of the real S3 server: every
 * request is relayed unchanged to the server (the Host header too, so SigV4
 * signatures still hold) and its reply relayed back, and the proxy writes
 * down what arrived (method, path, headers). Tests point s3x's endpoint at
 * it to see which endpoint a run used and which region it signed for
 * (radosgw accepts any region, so its answers cannot tell), and the exact
 * headers s3x sends where radosgw cannot show them (SSE-KMS, request-payer).
 *
 * With `answer` set it becomes a FAKE for the requests that function
 * picks: it answers those itself (e.g. a 412 to every conditional copy, to
 * play a server that mishandles x-amz-copy-source-if-match). Everything
 * else is radosgw's own answer.
 */
export interface RecordingProxy {
  endpoint: string;
  /** Requests that arrived so far, in order of arrival. */
  requests: RecordedRequest[];
  /** Decides, per request, whether the proxy answers it itself (default: never). */
  answer: (req: RecordedRequest) => FakeAnswer | undefined | Promise<FakeAnswer | undefined>;
  /** Requests the proxy answered itself. */
  answered: RecordedRequest[];
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  /** The request target: path and query string. */
  path: string;
  authorization?: string;
  headers: IncomingHttpHeaders;
}

/** A canned answer instead of relaying the request. */
export interface FakeAnswer {
  status: number;
  body: string;
}

/** The region of a SigV4 Authorization header's credential scope ("…/20261125/eu-west-3/s3/aws4_request"). */
export function signingRegion(authorization: string | undefined): string | undefined {
  return /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/.exec(authorization ?? "")?.[1];
}

/** The S3 error document a server sends with a 412. */
export const PRECONDITION_FAILED_XML =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>';

export async function startRecordingProxy(targetHost: string, targetPort: number): Promise<RecordingProxy> {
  const proxy: Pick<RecordingProxy, "requests" | "answered" | "answer"> = { requests: [], answered: [], answer: () => undefined };
  const relay = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    const upstream = httpRequest({ host: targetHost, port: targetPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (reply) => {
      outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(outgoing);
    });
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  };
  const server: Server = createServer((incoming, outgoing) => {
    const recorded: RecordedRequest = { method: incoming.method ?? "", path: incoming.url ?? "", authorization: incoming.headers.authorization, headers: { ...incoming.headers } };
    proxy.requests.push(recorded);
    // The body waits (paused) until the answer is decided.
    incoming.pause();
    void Promise.resolve(proxy.answer(recorded)).then((canned) => {
      if (!canned) return relay(incoming, outgoing);
      proxy.answered.push(recorded);
      incoming.resume();
      incoming.on("end", () => {
        outgoing.writeHead(canned.status, { "content-type": "application/xml", "content-length": Buffer.byteLength(canned.body) });
        outgoing.end(canned.body);
      });
    }, () => outgoing.destroy());
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
