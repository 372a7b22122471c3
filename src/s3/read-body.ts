import type { Readable } from "node:stream";
import { BodyOverflowError, ResponseBody, type NextSlice } from "../net/response-body.js";

/**
 * A GET's body into the caller's memory: a part buffer, or 1 MiB slices
 * written out as they fill. A ResponseBody (s3x's request handler) is read
 * with `readInto`/`readSlice`, which let the socket fill the buffer with no
 * copy; any other stream is copied chunk by chunk.
 */

/** Where a GET's body lands. */
export interface BodyDestination {
  /** The bytes land here, from `offset` on (unless `slices` is given). */
  target: Buffer;
  offset: number;
  /** The body goes to these slices as it arrives, instead of to `target`. */
  slices?: BodySlices;
  onBytes?: (n: number) => void;
}

/**
 * Where a ranged GET's body goes when it is written out as it arrives
 * instead of held whole: the slice being filled (and how much of it holds
 * bytes already), and `full` to hand a filled slice on, resolving when the
 * next may be filled; `handOnIfFree` does the same at once when the next
 * is free already, and returns it. The caller counts landed bytes through
 * `onBytes`.
 */
export interface BodySlices {
  current(): { buffer: Buffer; filled: number };
  full(): Promise<void>;
  handOnIfFree(): Buffer | undefined;
}

/** Reads a GET's body (`expected` bytes) into the destination's target or slices; returns the bytes that arrived. */
export function readBody(body: unknown, req: BodyDestination, expected: number): Promise<number> {
  if (req.slices) return body instanceof ResponseBody ? readSlices(body, req.slices, expected, req.onBytes) : copyStreamToSlices(body as Readable, req.slices, expected, req.onBytes);
  if (body instanceof ResponseBody) return body.readInto(req.target.subarray(0, req.offset + expected), req.offset, req.onBytes);
  return copyStream(body as Readable, req.target, req.offset, req.onBytes);
}

async function readSlices(body: ResponseBody, slices: BodySlices, expected: number, onBytes?: (n: number) => void): Promise<number> {
  let got = 0;
  try {
    while (got < expected) {
      const { buffer, filled } = slices.current();
      if (filled === buffer.length) {
        await slices.full(); // filled by an earlier attempt that ended right there
        continue;
      }
      const rest = expected - got;
      if (rest <= buffer.length - filled) {
        // The last slice: read to the end of the body (a slice would pause the
        // source at its last byte, before the end of the response is seen).
        const n = await body.readInto(buffer.subarray(0, filled + rest), filled, onBytes);
        got += n;
        if (filled + n === buffer.length) await slices.full();
        break;
      }
      // Reading goes on from slice to slice with no pause while the next is free.
      const n = await body.readSlice(buffer, filled, onBytes, (taken) => nextSlice(slices, rest - taken));
      got += n;
      const now = slices.current();
      if (now.filled < now.buffer.length) break; // the body ended (early, or in its last slice)
      await slices.full();
    }
  } catch (err) {
    // An overflow's figures are those of one read call, which began after the last wait for a slice: the whole body's instead.
    throw err instanceof BodyOverflowError ? new BodyOverflowError(expected, got + err.got) : err;
  }
  return got;
}

/** The slice to fill next with `left` bytes still to come, if it is free: the last one (sized to them) when they fit. */
function nextSlice(slices: BodySlices, left: number): NextSlice | undefined {
  const buffer = slices.handOnIfFree();
  if (!buffer) return undefined;
  return left <= buffer.length ? { buffer: buffer.subarray(0, left), last: true } : { buffer, last: false };
}

async function copyStreamToSlices(stream: Readable, slices: BodySlices, expected: number, onBytes?: (n: number) => void): Promise<number> {
  let got = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (got + chunk.length > expected) throw new BodyOverflowError(expected, got + chunk.length);
    for (let taken = 0; taken < chunk.length; ) {
      const { buffer, filled } = slices.current();
      if (filled === buffer.length) {
        await slices.full();
        continue;
      }
      const n = Math.min(buffer.length - filled, chunk.length - taken);
      chunk.copy(buffer, filled, taken, taken + n);
      taken += n;
      got += n;
      onBytes?.(n);
      if (filled + n === buffer.length) await slices.full();
    }
  }
  return got;
}

async function copyStream(stream: Readable, target: Buffer, offset: number, onBytes?: (n: number) => void): Promise<number> {
  let position = offset;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (position + chunk.length > target.length) throw new BodyOverflowError(target.length - offset, position - offset + chunk.length);
    chunk.copy(target, position);
    position += chunk.length;
    onBytes?.(chunk.length);
  }
  return position - offset;
}
