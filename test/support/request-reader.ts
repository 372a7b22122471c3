import type { Socket } from "node:net";

/**
 * Reads HTTP/1.1 requests off a test server's socket, framed by their
 * Content-Length (test servers of net/http1 only: no chunked requests). Each
 * head goes to `onHead` (which may answer at once, before the body), each
 * whole request to `onRequest`.
 */
export function readRequests(
  socket: Socket,
  onRequest: (head: string, body: Buffer) => void,
  onHead: (head: string) => void = () => undefined,
): void {
  let pending = Buffer.alloc(0);
  let head: string | undefined;
  let want = -1;
  socket.on("data", (data: Buffer) => {
    pending = Buffer.concat([pending, data]);
    for (;;) {
      if (want < 0) {
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        head = pending.toString("latin1", 0, end);
        want = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        pending = pending.subarray(end + 4);
        onHead(head);
      }
      if (pending.length < want) return;
      const body = Buffer.from(pending.subarray(0, want));
      pending = pending.subarray(want);
      want = -1;
      onRequest(head!, body);
    }
  });
  socket.on("error", () => undefined);
}
