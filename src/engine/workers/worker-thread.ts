import { writeSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { connect, type S3Connection, type S3Settings } from "../../s3/client.js";
import { describeFailure } from "../../s3/errors.js";
import { getRange } from "../../s3/operations.js";
import type { SigningCredentials } from "../../s3/sigv4.js";
import type { AttemptRouting } from "../../net/routing.js";
import { digestOf } from "../integrity/checksums.js";
import { RangeSlices, SLICE_BYTES } from "../range-slices.js";
import { writeCallLength } from "../sinks/write-calls.js";
import type { DigestPiece, DigestPlan, FromWorker, RangeToFileTask, ToWorker, WorkerSetup } from "./protocol.js";

/**
 * A data-plane worker thread (engine/workers/pool.ts starts them). It owns
 * its connection pools, TLS sessions, signer cache and slice buffers, and
 * runs one attempt of each task it is given: the retry loop, the pacer, the
 * memory budget and the resume journal stay on the main thread. A range is
 * written where it belongs in the file the main thread opened (positional
 * writes into the same descriptor), so its bytes never cross threads.
 */

const port = parentPort;
if (!port) throw new Error("engine/workers/worker-thread.ts runs only as a worker thread");
const setup = workerData as WorkerSetup;

/** The last credentials handed over, kept as the same object while they do not change: the signer cache is keyed by it. */
let credentials: SigningCredentials | undefined;
const connection: S3Connection = connect(connectionSettings(setup), async () => {
  if (!credentials) throw new Error("no credentials were handed to the worker thread");
  return credentials;
});
const running = new Map<number, AbortController>();
/** Slice-buffer pairs of finished tasks, reused (fresh memory costs page faults). */
const freeBuffers: Buffer[] = [];
let writtenTotal = 0;

port.on("message", (message: ToWorker) => {
  if (message.type === "cancel") {
    running.get(message.id)?.abort(new Error("cancelled"));
    return;
  }
  if (message.type === "stats") {
    void connection.addressStats().then((stats) => post({ type: "stats", id: message.id, stats }));
    return;
  }
  void runRange(message);
});

function connectionSettings(s: WorkerSetup): S3Settings {
  const tls = s.settings.net.tls;
  if (!tls) return s.settings;
  // The TLS context is made here from the PEM text: a SecureContext cannot cross threads.
  const secureContext = tls.ca === undefined ? undefined : process.getBuiltinModule("node:tls").createSecureContext({ ca: tls.ca });
  return { ...s.settings, net: { ...s.settings.net, tls: { ...tls, secureContext } } };
}

function adoptCredentials(given: SigningCredentials | undefined): void {
  if (given === undefined) return;
  const same = credentials && credentials.accessKeyId === given.accessKeyId && credentials.secretAccessKey === given.secretAccessKey && credentials.sessionToken === given.sessionToken;
  if (!same) credentials = given;
}

async function runRange(task: RangeToFileTask): Promise<void> {
  const controller = new AbortController();
  running.set(task.id, controller);
  adoptCredentials(task.credentials);
  const memory = freeBuffers.pop() ?? Buffer.allocUnsafeSlow(2 * SLICE_BYTES);
  const routing: AttemptRouting = { avoid: new Set(task.avoid) };
  const slices = new RangeSlices([memory.subarray(0, SLICE_BYTES), memory.subarray(SLICE_BYTES)], task.start, async (offset, data) => {
    writeAt(task.fd, data, offset);
    const pieces = task.digest ? await digestPieces(task.digest, offset, data) : [];
    post({ type: "written", id: task.id, bytes: data.length, pieces });
    writtenTotal += data.length;
    if (setup.exitAfterBytes !== undefined && writtenTotal >= setup.exitAfterBytes) process.exit(70);
  });
  let ended: FromWorker;
  try {
    const result = await getRange(connection.s3, {
      ref: task.ref,
      start: task.start,
      end: task.end,
      ifMatch: task.ifMatch,
      target: memory,
      offset: 0,
      slices,
      signal: controller.signal,
      routing,
      onBytes: (n) => slices.advance(n),
    });
    await slices.finish();
    ended = { type: "ended", id: task.id, result: { etag: result.etag, objectSize: result.objectSize } };
  } catch (err) {
    const failure = describeFailure(err);
    failure.address ??= routing.address;
    ended = { type: "ended", id: task.id, failure };
  }
  // Nothing of this task may write once its end is told: the main thread may then close the file.
  await slices.settled();
  running.delete(task.id);
  freeBuffers.push(memory);
  post(ended);
}

function writeAt(fd: number, data: Uint8Array, position: number): void {
  for (let done = 0; done < data.length; ) {
    done += writeSync(fd, data, done, writeCallLength(data.length - done), position + done);
  }
}

/** The digests of `data` (at object offset `offset`), cut at the plan's piece boundaries. */
async function digestPieces(plan: DigestPlan, offset: number, data: Buffer): Promise<DigestPiece[]> {
  const pieces: DigestPiece[] = [];
  const end = offset + data.length;
  for (let at = offset; at < end; ) {
    const boundary = plan.pieceBoundary ? (Math.floor(at / plan.pieceBoundary) + 1) * plan.pieceBoundary : end;
    const pieceEnd = Math.min(end, boundary);
    pieces.push({ offset: at, length: pieceEnd - at, digest: await digestOf(plan.algorithm, data.subarray(at - offset, pieceEnd - offset)) });
    at = pieceEnd;
  }
  return pieces;
}

function post(message: FromWorker): void {
  port!.postMessage(message);
}
