import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { Agent, createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EventEmitter } from "node:events";

/**
 * FAKE: a lost answer. An HTTP/1.1 reverse proxy in front of the real
 * radosgw that forwards every request unchanged (same method, path, query
 * and headers, Host included, so SigV4 still verifies) and relays every
 * answer — except that, when armed, it lets radosgw carry out the next
 * CompleteMultipartUpload or CreateMultipartUpload in full, reads its whole
 * answer, and then cuts the client's connection without sending a byte of
 * it: what a client sees when a response is lost on the way back (a reset
 * after the server acted). No real server here can be told to do that.
 * Optionally it then answers a retried Complete of that upload with 404
 * NoSuchUpload, as many S3 servers do once an upload is completed (radosgw
 * 16 answers 200 again instead), without forwarding it.
 * It also counts the requests of each kind it forwarded and answered
 * (UploadPart and friends), so a test can tell how many parts a client sent,
 * and can hold UploadParts from some part number on (never forwarded): a
 * transfer stopped half-way at a known point, to be killed there.
 */
export type Operation = "CreateMultipartUpload" | "UploadPart" | "CompleteMultipartUpload" | "AbortMultipartUpload" | "PutObject" | "Other";

export interface ForgetOptions {
  /** Answer a dropped Complete's upload NoSuchUpload when it is completed again. */
  thenNoSuchUpload?: boolean;
  /** Runs before that NoSuchUpload answer goes out (e.g. another writer replacing the object meanwhile). */
  beforeNoSuchUpload?: () => Promise<void>;
}

export interface DropResponseProxy {
  endpoint: string;
  /**
   * Drop the answer to the next `count` requests of `operation` (after
   * radosgw processed them); with `thenNoSuchUpload`, a dropped Complete's
   * upload is answered NoSuchUpload when completed again.
   */
  dropNext(operation: "CreateMultipartUpload" | "CompleteMultipartUpload", count?: number, options?: ForgetOptions): void;
  /** Requests forwarded, by operation. */
  counts: Record<Operation, number>;
  /** Successful (2xx) answers relayed to the client, by operation: an UploadPart counted here is stored. */
  succeeded: Record<Operation, number>;
  /**
   * The next `count` UploadParts are forwarded, whatever their part numbers;
   * every later one is held, never forwarded, until `release`. (Not "parts
   * numbered 2 and up": which part goes first is s3x's choice, e.g. the one
   * that probes the server's checksum support, and the others wait for it.)
   */
  holdPartsAfter(count: number): void;
  /** Requests held so far. */
  held: number;
  /** Cuts the held requests' connections and forwards everything again. */
  release(): void;
  /** Resolves once `condition()` holds, checked on every request and answer. */
  until(condition: () => boolean): Promise<void>;
  /** Answers dropped so far. */
  dropped: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "expect", "proxy-connection", "upgrade", "te", "transfer-encoding"]);

function operationOf(req: IncomingMessage): Operation {
  const q = new URL(req.url ?? "/", "http://proxy").searchParams;
  if (req.method === "POST" && q.has("uploads")) return "CreateMultipartUpload";
  if (req.method === "POST" && q.has("uploadId")) return "CompleteMultipartUpload";
  if (req.method === "PUT" && q.has("uploadId") && q.has("partNumber")) return "UploadPart";
  if (req.method === "DELETE" && q.has("uploadId")) return "AbortMultipartUpload";
  if (req.method === "PUT" && [...q.keys()].every((k) => k === "x-id")) return "PutObject";
  return "Other";
}

export async function startDropResponseProxy(targetHost: string, targetPort: number): Promise<DropResponseProxy> {
  const agent = new Agent({ keepAlive: true });
  const armed = new Map<Operation, number>();
  const counts: Record<Operation, number> = { CreateMultipartUpload: 0, UploadPart: 0, CompleteMultipartUpload: 0, AbortMultipartUpload: 0, PutObject: 0, Other: 0 };
  const succeeded: Record<Operation, number> = { CreateMultipartUpload: 0, UploadPart: 0, CompleteMultipartUpload: 0, AbortMultipartUpload: 0, PutObject: 0, Other: 0 };
  const state = { dropped: 0, forwardParts: Infinity, held: [] as IncomingMessage[], forget: {} as ForgetOptions };
  const forgotten = new Set<string>();
  const events = new EventEmitter();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const operation = operationOf(req);
    counts[operation]++;
    const query = new URL(req.url ?? "/", "http://proxy").searchParams;
    const uploadId = query.get("uploadId") ?? "";
    if (operation === "CompleteMultipartUpload" && forgotten.has(uploadId)) {
      req.resume();
      req.on("end", async () => {
        await state.forget.beforeNoSuchUpload?.();
        const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>`;
        res.writeHead(404, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
      return;
    }
    if (operation === "UploadPart" && state.forwardParts-- <= 0) {
      state.held.push(req);
      events.emit("change");
      return;
    }
    const drop = (armed.get(operation) ?? 0) > 0;
    if (drop) armed.set(operation, (armed.get(operation) ?? 1) - 1);
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    const up = request({ host: targetHost, port: targetPort, method: req.method, path: req.url, headers, agent }, (upRes) => {
      if (drop) {
        // radosgw has answered: read it all (the operation is done), then lose it.
        upRes.resume();
        upRes.on("end", () => {
          state.dropped++;
          if (operation === "CompleteMultipartUpload" && state.forget.thenNoSuchUpload) forgotten.add(uploadId);
          events.emit("change");
          req.socket.resetAndDestroy();
        });
        return;
      }
      const out: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(upRes.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
      res.writeHead(upRes.statusCode ?? 502, out);
      upRes.pipe(res);
      res.on("finish", () => {
        if ((upRes.statusCode ?? 0) >= 200 && (upRes.statusCode ?? 0) < 300) succeeded[operation]++;
        events.emit("change");
      });
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    succeeded,
    holdPartsAfter: (count) => void (state.forwardParts = count),
    get held() {
      return state.held.length;
    },
    release: () => {
      state.forwardParts = Infinity;
      for (const req of state.held.splice(0)) req.socket.destroy();
    },
    until: (condition) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (!condition()) return;
          events.off("change", check);
          resolve();
        };
        events.on("change", check);
        check();
      }),
    get dropped() {
      return state.dropped;
    },
    dropNext: (operation, count = 1, options = {}) => {
      armed.set(operation, count);
      state.forget = options;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/**
 * Runs s3x through `proxy` (`run` spawns it) so that one part lands and the
 * rest are held, kills it -9 there, and checks that this kill, not a time
 * limit or the run's own end, stopped it: what --resume tests start from.
 */
export async function interruptAfterOnePart(proxy: DropResponseProxy, run: (onSpawn: (child: ChildProcess) => void) => Promise<{ signal: NodeJS.Signals | null; code: number | null; stderr: string }>): Promise<void> {
  proxy.holdPartsAfter(1);
  const storedBefore = proxy.succeeded.UploadPart;
  let killed = false;
  const res = await run((child) => {
    child.stdin!.end();
    void proxy.until(() => proxy.succeeded.UploadPart > storedBefore && proxy.held > 0).then(() => {
      killed = child.kill("SIGKILL");
    });
  });
  proxy.release();
  assert.ok(killed && res.signal === "SIGKILL", `expected the kill after a stored part; it ended with ${res.signal ?? res.code}: ${res.stderr}`);
}
