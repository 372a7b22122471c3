// The floor for s3x's HTTPS downloads: what Node itself spends to fetch an
// object over TLS in ranged GETs, with nothing else (no signing, no writes,
// no accounting). Compare its CPU with s3x's and the peers' on the same object.
//
//   node bench/floor/tls-ranged-get.cjs PRESIGNED_HTTPS_URL SIZE [CONNECTIONS]
//   (AWS_CA_BUNDLE names the server's certificate; `s3x presign` makes the URL)
//
// Knobs, to add back one at a time what s3x does per TLS record:
//   VIEW=1  read into a new view of an 8 MiB buffer each time (s3x reads into part buffers)
//   TMO=1   an idle timeout on each socket (Node refreshes its timer on every read)
//   NOW=1   two clock reads per read (s3x's rate meters)
//   WORKERS=N  the connections spread over N worker threads (parts from one
//              shared counter): what a data plane across threads would gain
//   WRITE=PATH each range read into its own part buffer and written at its
//              offset into PATH in 1 MiB positional writes (WRITE_SLICE bytes),
//              as s3x writes a download to a file: the floor with the writes
"use strict";
const tls = require("node:tls");
const fs = require("node:fs");
const { Worker, isMainThread, parentPort, workerData } = require("node:worker_threads");

const url = new URL(process.argv[2]);
const total = Number(process.argv[3]);
const connections = Number(process.argv[4] || 8);
const PART = 8 << 20;
const parts = Math.ceil(total / PART);
const ca = process.env.AWS_CA_BUNDLE ? fs.readFileSync(process.env.AWS_CA_BUNDLE) : undefined;
const workers = Number(process.env.WORKERS || 1);
const writePath = process.env.WRITE;
const WRITE_SLICE = Number(process.env.WRITE_SLICE || 1 << 20);
// The main thread creates the file; worker threads open it after (their start follows this line).
const outFd = writePath ? fs.openSync(writePath, isMainThread ? "w" : "r+") : undefined;
// The next part to fetch, shared by every thread.
const nextPart = isMainThread ? new Int32Array(new SharedArrayBuffer(4)) : workerData.nextPart;
let received = 0;
let finished = 0;
let session;
const started = performance.now();

function connection() {
  let want = 0;
  let inBody = false;
  let head = "";
  const scratch = Buffer.allocUnsafe(64 * 1024);
  const part = Buffer.allocUnsafe(PART);
  let position = 0;
  const views = process.env.VIEW === "1";
  // WRITE: the range's bytes land at `filled` in `part`; `written` of them are in the file.
  let rangeStart = 0;
  let filled = 0;
  let written = 0;
  const flush = (all) => {
    while (filled - written >= WRITE_SLICE || (all && filled > written)) {
      const length = Math.min(WRITE_SLICE, filled - written);
      fs.writeSync(outFd, part, written, length, rangeStart + written);
      written += length;
    }
  };
  const socket = tls.connect({
    host: url.hostname,
    port: Number(url.port || 443),
    servername: require("node:net").isIP(url.hostname) ? undefined : url.hostname,
    ca,
    session,
    ALPNProtocols: ["http/1.1"],
    onread: {
      buffer:
        outFd !== undefined
          ? () => part.subarray(filled, Math.min(PART, filled + 64 * 1024))
          : views
            ? () => part.subarray(position, Math.min(PART, position + 64 * 1024))
            : scratch,
      callback: (n, buf) => {
        if (views) position = (position + n) % (PART - 64 * 1024);
        if (outFd !== undefined && inBody) {
          filled += n;
          flush(false);
        }
        if (process.env.NOW === "1") {
          Date.now();
          performance.now();
        }
        if (!inBody) {
          head += buf.latin1Slice(0, n);
          const end = head.indexOf("\r\n\r\n");
          if (end < 0) return;
          const bodyBytes = head.length - end - 4;
          if (outFd !== undefined) {
            // The body's first bytes came with the head: to the start of the part buffer.
            buf.copy(part, 0, n - bodyBytes, n);
            filled = bodyBytes;
            flush(false);
          }
          inBody = true;
          head = "";
          want -= bodyBytes;
          received += bodyBytes;
        } else {
          want -= n;
          received += n;
        }
        if (want === 0) {
          if (outFd !== undefined) flush(true);
          inBody = false;
          send();
        }
      },
    },
  });
  socket.on("session", (s) => (session = s));
  if (process.env.TMO === "1") socket.setTimeout(30_000);
  socket.on("secureConnect", send);
  socket.on("error", (err) => {
    console.error(err.message);
    process.exit(1);
  });
  function send() {
    const i = Atomics.add(nextPart, 0, 1);
    if (i >= parts) {
      socket.end();
      if (++finished === mine) (isMainThread ? report : () => parentPort.postMessage(received))();
      return;
    }
    const first = i * PART;
    const last = Math.min(total, first + PART) - 1;
    want = last - first + 1;
    rangeStart = first;
    filled = 0;
    written = 0;
    socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nRange: bytes=${first}-${last}\r\n\r\n`);
  }
}

function report() {
  const cpu = process.cpuUsage();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${received} bytes in ${seconds.toFixed(2)} s, user ${(cpu.user / 1e6).toFixed(2)} s, system ${(cpu.system / 1e6).toFixed(2)} s`);
  if (received !== total) process.exitCode = 1;
}

// This thread's connections; with WORKERS, the main thread only waits for the workers' byte counts.
const mine = isMainThread ? (workers > 1 ? 0 : connections) : workerData.connections;
if (isMainThread && workers > 1) {
  let reported = 0;
  for (let w = 0; w < workers; w++) {
    const share = Math.floor(connections / workers) + (w < connections % workers ? 1 : 0);
    const worker = new Worker(__filename, { argv: process.argv.slice(2), workerData: { nextPart, connections: share } });
    worker.on("message", (bytes) => {
      received += bytes;
      if (++reported === workers) report();
    });
  }
}
for (let i = 0; i < mine; i++) connection();
