import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A FAKE: an HTTP proxy in front of the real S3 server that plays what a
 * server does to CompleteMultipartUpload (POST ?uploadId=…) where radosgw
 * cannot: radosgw ignores x-amz-checksum-* (like Swift's S3 layer), but
 * accepts `<ChecksumCRC32C>` elements in Complete, which some such servers
 * refuse with 400 MalformedXML. Complete requests are read whole and then,
 * by `mode`:
 *  - "relay": passed on (the default);
 *  - "refuse-checksums": 400 MalformedXML when the body holds a checksum
 *    element or the request a checksum header, else passed on;
 *  - "refuse-all": 400 MalformedXML to every Complete;
 *  - "error-in-200": 200 with an <Error><Code>InvalidPart</Code> body, as
 *    S3 answers a Complete that failed after its headers went out;
 *  - "hold": never answered (the test kills s3x meanwhile);
 *  - "complete-then-hold": passed on, radosgw's answer (the upload
 *    completed) awaited and then withheld, as when s3x is killed between
 *    the server completing and the answer arriving.
 * Every other request is relayed untouched (the Host header too, so
 * signatures hold); Complete bodies are passed on byte for byte.
 */
export type CompleteMode = "relay" | "refuse-checksums" | "refuse-all" | "error-in-200" | "hold" | "complete-then-hold";

export interface CompleteRefusingProxy {
  endpoint: string;
  mode: CompleteMode;
  /** Complete requests that arrived, with whether they carried checksums. */
  completes: { withChecksums: boolean }[];
  /** UploadPart requests (PUT ?partNumber=…) that arrived. */
  uploadParts: number;
  /** Resolves when the next Complete arrives ("hold"), or once radosgw completed it ("complete-then-hold"). */
  held(): Promise<void>;
  close(): Promise<void>;
}

export const MALFORMED_XML =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>MalformedXML</Code><Message>The XML you provided was not well-formed or did not validate against our published schema</Message></Error>';
export const INVALID_PART_XML =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidPart</Code><Message>One or more of the specified parts could not be found.</Message></Error>';

export async function startCompleteRefusingProxy(targetHost: string, targetPort: number): Promise<CompleteRefusingProxy> {
  let heldNow: (() => void) | undefined;
  let heldPromise = new Promise<void>((resolve) => (heldNow = resolve));
  const holding = new Set<ServerResponse>();
  const proxy: Omit<CompleteRefusingProxy, "endpoint" | "close"> = {
    mode: "relay",
    completes: [],
    uploadParts: 0,
    held: () => heldPromise,
  };
  const signalHeld = (): void => {
    heldNow?.();
    heldPromise = new Promise<void>((resolve) => (heldNow = resolve));
  };
  const answer = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  const forward = (req: IncomingMessage, body: Buffer | undefined, onAnswer: (status: number, headers: IncomingMessage["headers"], reply: IncomingMessage) => void, res: ServerResponse): void => {
    const upstream = request({ host: targetHost, port: targetPort, method: req.method, path: req.url, headers: req.headers }, (reply) => onAnswer(reply.statusCode ?? 502, reply.headers, reply));
    upstream.on("error", () => res.destroy());
    if (body) upstream.end(body);
    else req.pipe(upstream);
  };
  const relay = (req: IncomingMessage, res: ServerResponse, body?: Buffer): void =>
    forward(req, body, (status, headers, reply) => {
      res.writeHead(status, headers);
      reply.pipe(res);
    }, res);

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "PUT" && url.searchParams.has("partNumber")) proxy.uploadParts++;
    if (req.method !== "POST" || !url.searchParams.has("uploadId")) return relay(req, res);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const withChecksums = /<Checksum[A-Z0-9]/.test(body.toString("utf8")) || Object.keys(req.headers).some((h) => h.startsWith("x-amz-checksum-"));
      proxy.completes.push({ withChecksums });
      switch (proxy.mode) {
        case "refuse-checksums":
          return withChecksums ? answer(res, 400, MALFORMED_XML) : relay(req, res, body);
        case "refuse-all":
          return answer(res, 400, MALFORMED_XML);
        case "error-in-200":
          return answer(res, 200, INVALID_PART_XML);
        case "hold":
          holding.add(res);
          return signalHeld();
        case "complete-then-hold":
          holding.add(res);
          return forward(req, body, (_status, _headers, reply) => {
            reply.resume();
            reply.on("end", signalHeld);
          }, res);
        default:
          return relay(req, res, body);
      }
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(proxy, {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      for (const res of holding) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
