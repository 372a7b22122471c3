import type { Socket } from "node:net";
import { UPLOAD_SLICE_BYTES, sentInSlices } from "../upload-slices.js";

/** What writing a body in slices tells the connection (net/http1/connection.ts). */
export interface SliceProgress {
  /** False once the connection failed or moved on: no further slice is written. */
  stillWanted(): boolean;
  /** A slice of `n` bytes is with the kernel. */
  sent(n: number): void;
  /** The whole body is. */
  done(): void;
}

/**
 * Writes a request on `socket`: the head alone; the head and a small body
 * in one writev; or the head, then a large body (sentInSlices) one slice at
 * a time, each once the kernel has taken the one before, so that each
 * counts as progress when it leaves and a slow server is seen as one.
 */
export function writeRequest(socket: Socket, head: string, body: Uint8Array | undefined, progress: SliceProgress): void {
  if (!body || body.byteLength === 0) {
    socket.write(head, "latin1");
    return;
  }
  if (!sentInSlices(body.byteLength)) {
    socket.cork();
    socket.write(head, "latin1");
    socket.write(body);
    socket.uncork();
    return;
  }
  socket.write(head, "latin1");
  writeSlice(socket, body, 0, progress);
}

function writeSlice(socket: Socket, body: Uint8Array, offset: number, progress: SliceProgress): void {
  const end = Math.min(body.byteLength, offset + UPLOAD_SLICE_BYTES);
  socket.write(body.subarray(offset, end), (err) => {
    if (err || !progress.stillWanted()) return;
    progress.sent(end - offset);
    if (end < body.byteLength) writeSlice(socket, body, end, progress);
    else progress.done();
  });
}
