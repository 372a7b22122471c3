import type { HttpAnswer } from "../http-answer.js";
import type { FrontEndAddress, HostAddresses } from "../pools.js";
import { abortReason, clientClosed } from "../failures.js";
import type { AttemptRouting } from "../routing.js";
import { RequestAccounting } from "../request-accounting.js";
import { Exchange } from "./exchange.js";
import type { RawPools } from "./pool.js";
import { mayResend } from "./resend.js";

/**
 * s3x's own HTTP/1.1 client for every request, over plain HTTP and TLS:
 * ranged GETs and part uploads above all, and the rest (HEAD, POST, DELETE).
 *
 * Why: with undici (the transport before it) every socket read is a fresh Buffer that is parsed,
 * handed through its dispatcher and then copied into the part buffer; on
 * our 2 cores that costs ~2.2 client CPU-s per GiB downloaded, and every
 * CPU-second the client burns is one the server does not get. Here the
 * socket is opened with Node's `onread` option, and once the response
 * headers are in and the engine waits with a part buffer (ResponseBody
 * `readInto`), each socket read lands straight in that part buffer: no
 * allocation, no copy, no stream per chunk (~0.9 CPU-s per GiB).
 *
 * Uploads take this path too: the part buffer is written to the socket in
 * slices, one after the other as the kernel takes them, so each completed
 * write is the upload's progress (per-address rates, straggler watch) and
 * keeps the socket's timer alive; that costs ~0.1 client CPU-s per GiB less
 * than undici's iterable bodies, with far less variance.
 *
 * The request arrives built and signed (s3/request.ts). Connections are
 * kept alive per front-end address, and every request keeps the address's
 * counters, health and straggler watch (net/request-accounting.ts). Error
 * responses (any status) flow through the same ResponseBody stream, and
 * s3/request.ts reads them.
 */

/** Methods the raw path sends: every one S3 uses. */
export const RAW_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "POST", "DELETE"]);

/** Where a raw request goes: one front-end address of a host, on a port. */
export interface RawTarget {
  pools: RawPools;
  address: FrontEndAddress;
  host: HostAddresses;
  port: number;
}

/** A request as it goes on the wire: already signed, the body (if any) in one buffer. */
export interface RawRequest {
  method: string;
  /** Path and query string. */
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
}

export interface RawRequestOptions {
  /** Bytes the request moves (a body sent or a range asked for): the straggler watch's yardstick. */
  expectedBytes: number;
  signal?: AbortSignal;
  routing?: AttemptRouting;
  /** Send on a new connection (net/nagle-workaround.ts), which then joins the pool. */
  fresh?: boolean;
}

/**
 * Sends a request to the target address on a raw keep-alive connection and
 * resolves when the response headers are in; the body then flows into a
 * ResponseBody whose `readInto` lets the socket fill the part buffer.
 */
export function rawRequest(target: RawTarget, request: RawRequest, options: RawRequestOptions): Promise<HttpAnswer> {
  const { pools, address, host, port } = target;
  const { method, body } = request;
  const { signal, fresh = false } = options;
  return new Promise<HttpAnswer>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    if (pools.isClosed) {
      reject(clientClosed());
      return;
    }
    if (!RAW_METHODS.has(method)) {
      reject(new Error(`the raw HTTP path does not send ${method}`));
      return;
    }
    const sending = body?.byteLength ?? 0;
    let head: string;
    try {
      head = requestHead(request, sending);
    } catch (err) {
      reject(err as Error);
      return;
    }
    let resent = false;
    let canResend = false;
    const send = (): void => {
      // The second try opens a new connection: the other idle ones may be as stale as the first.
      const { conn, reused } = pools.take(address, port, resent || fresh);
      exchange.conn = conn;
      conn.start(exchange, head, body);
      canResend = reused && mayResend(method);
    };
    const account = (abort: (reason: Error) => void) => new RequestAccounting(address, host, sending, options.expectedBytes, signal, options.routing, abort);
    const exchange = new Exchange(account, method === "HEAD", resolve, reject, () => {
      // One fresh connection for a request whose kept-alive connection had gone stale.
      if (!canResend || resent || pools.isClosed) return false;
      resent = true;
      send();
      return true;
    });
    send();
  });
}

/** The request line and headers; throws on a header value that would split the head. */
function requestHead(request: RawRequest, sending: number): string {
  const { method, path, headers } = request;
  let head = `${method} ${path} HTTP/1.1\r\n`;
  // A PUT or POST always states its length, even an empty one (UploadPartCopy, CreateMultipartUpload): servers answer 411 otherwise.
  if ((sending > 0 || method === "PUT" || method === "POST") && !hasContentLength(headers)) head += `content-length: ${sending}\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (/[\r\n]/.test(value)) throw new Error(`header ${name} holds a line break`);
    head += `${name}: ${value}\r\n`;
  }
  return head + "\r\n";
}

function hasContentLength(headers: Record<string, string>): boolean {
  for (const name in headers) if (name.toLowerCase() === "content-length") return true;
  return false;
}
