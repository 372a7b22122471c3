import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A request-recording HTTP proxy in front of the real S3 server: every
 * request is relayed unchanged to the server and its reply relayed back,
 * and the proxy writes down what arrived (method, path, Authorization
 * header). Tests point s3x's endpoint at it to see which endpoint a run
 * used and which region it signed for (radosgw accepts any region, so its
 * answers cannot tell). It is not a fake S3: every answer is radosgw's.
 */
export interface RecordingProxy {
  endpoint: string;
  /** Requests relayed so far, in order of arrival. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization?: string;
}

/** The region of a SigV4 Authorization header's credential scope ("…/20261125/eu-west-3/s3/aws4_request"). */
export function signingRegion(authorization: string | undefined): string | undefined {
  return /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/.exec(authorization ?? "")?.[1];
}

export async function startRecordingProxy(targetHost: string, targetPort: number): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((incoming: IncomingMessage, outgoing) => {
    requests.push({ method: incoming.method ?? "", path: incoming.url ?? "", authorization: incoming.headers.authorization });
    const upstream = httpRequest({ host: targetHost, port: targetPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (reply) => {
      outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(outgoing);
    });
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
