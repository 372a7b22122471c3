import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { FdWriter } from "../../../src/engine/sinks/fd-writer.js";

describe("engine/sinks/fd-writer", () => {
  it("a reader that goes away while the stream holds data: the write fails with EPIPE, and the stream's later 'error' does not crash the process", async () => {
    // A real pipe to a process that never reads: its non-blocking write end fills
    // up (EAGAIN), the writer moves to the stream, and then the reader exits.
    const reader = spawn("sleep", ["30"], { stdio: ["pipe", "ignore", "ignore"] });
    const pipe = reader.stdin as unknown as Socket & { _handle: { fd: number } };
    let movedToStream!: () => void;
    const onStream = new Promise<void>((resolve) => (movedToStream = resolve));
    const writer = new FdWriter(pipe._handle.fd, () => {
      movedToStream();
      return pipe;
    });
    const pending = writer.write(Buffer.alloc(4 * 1024 * 1024, 7));
    // The reader goes away once the writer has met the full pipe and holds data in the stream.
    await onStream;
    reader.kill("SIGKILL");
    await assert.rejects(pending, (err: NodeJS.ErrnoException) => err.code === "EPIPE");
    // Let the stream's own 'error' event fire ('close' follows it): an unhandled one would fail this test.
    while (!pipe.closed) await new Promise((resolve) => setTimeout(resolve, 10));
    await assert.rejects(writer.write(Buffer.from("more")), (err: NodeJS.ErrnoException) => err.code === "EPIPE");
  });
});
