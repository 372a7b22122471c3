import { writeSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { connect, type S3Connection, type S3Settings } from "../../s3/client.js";
import { FileTlsSessionStore, SecureContexts } from "../../net/pools.js";
import { describeFailure } from "../../s3/errors.js";
import { getRange, putObject, uploadPart, type ChecksumValue } from "../../s3/operations.js";
import type { SigningCredentials } from "../../s3/sigv4.js";
import type { AttemptRouting } from "../../net/routing.js";
import { HEDGE_CHECK_MS } from "../hedge.js";
import { digestPieces } from "./digest-pieces.js";
import { RangeSlices, SLICE_BYTES } from "../range-slices.js";
import { writeCallLength } from "../sinks/write-calls.js";
import type { DigestPiece, FromWorker, ObjectPut, PartUpload, RangeToFile, RangeToMemory, SharedBytes, TaskMessage, TaskResult, ToWorker, WorkerSetup } from "./protocol.js";

/**
 * A data-plane worker thread (engine/workers/pool.ts starts them). It owns
 * its connection pools, TLS sessions, signer cache and slice buffers, and
 * runs one attempt of each task it is given: the retry loop, the pacer, the
 * memory budget and the resume journal stay on the main thread. A range for
 * a file is written where it belongs in the file the main thread opened
 * (positional writes into the same descriptor); other bytes are read from
 * or written into part buffers both threads share. Bytes never cross threads.
 */

const port = parentPort;
if (!port) throw new Error("engine/workers/worker-thread.ts runs only as a worker thread");
const setup = workerData as WorkerSetup;
/**
 * What landed is told in steps of at least this many bytes (and before the
 * task's end): a message costs both threads tens of microseconds, so one per
 * TLS record, or even per 1 MiB slice, showed in CPU per GiB.
 */
const TELL_STEP = 4 * 1024 * 1024;

/** The last credentials handed over, kept as the same object while they do not change: the signer cache is keyed by it. */
let credentials: SigningCredentials | undefined;
const connection: S3Connection = connect(connectionSettings(setup), async () => {
  if (!credentials) throw new Error("no credentials were handed to the worker thread");
  return credentials;
});
const running = new Map<number, AbortController>();
/** Slice-buffer pairs of finished ranges, reused (fresh memory costs page faults). */
const freeSlices: Buffer[] = [];
let movedTotal = 0;

port.on("message", (message: ToWorker) => {
  if (message.type === "cancel") running.get(message.id)?.abort(new Error("cancelled"));
  else if (message.type === "stats") void connection.addressStats().then((stats) => post({ type: "stats", id: message.id, stats }));
  else if (message.type === "address-bad") void connection.markAddressBad(message.address, message.problem);
  else if (message.type === "lost-to-hedge") watched.get(message.id)?.routing.tracked?.lostToHedge();
  else if (message.type === "count-hedge") void connection.countHedge(message.address, message.won);
  else void runTask(message);
});

function connectionSettings(s: WorkerSetup): S3Settings {
  // What this worker's pools find bad, the main thread passes on to every other pool.
  const onAddressBad = (address: string, problem: string): void => post({ type: "address-bad", address, problem });
  const tls = s.settings.net.tls;
  // The TLS contexts are made here from the PEM text: a SecureContext cannot cross threads.
  const contexts = tls && new SecureContexts(tls.ca, tls.verify);
  const sessions = s.keptSessions && new FileTlsSessionStore(s.keptSessions.dir, s.keptSessions.trust);
  const debug = s.debug ? (line: string): void => post({ type: "debug", line: `worker thread ${s.index}: ${line}` }) : undefined;
  return { ...s.settings, net: { ...s.settings.net, debug, onAddressBad, tls: tls && { ...tls, contexts, sessions } } };
}

function adoptCredentials(given: SigningCredentials | undefined): void {
  if (given === undefined) return;
  const same = credentials && credentials.accessKeyId === given.accessKeyId && credentials.secretAccessKey === given.secretAccessKey && credentials.sessionToken === given.sessionToken;
  if (!same) credentials = given;
}

/** Attempts the main thread's tail hedger follows, with what it was last told of each. */
const watched = new Map<number, { routing: AttemptRouting; told?: string; worthy: boolean }>();
let watchTimer: NodeJS.Timeout | undefined;

/**
 * Every HEDGE_CHECK_MS, for each watched attempt: once the transport chose
 * its address, and whenever the straggler watch changes its mind on whether
 * a duplicate elsewhere would finish first, the main thread is told (its
 * retry loop runs the hedge, engine/retry.ts).
 */
function watchForHedges(): void {
  for (const [id, entry] of watched) {
    const { routing } = entry;
    if (!routing.tracked || routing.address === undefined) continue;
    const worthy = routing.tracked.hedgeWorthy();
    if (entry.told === routing.address && entry.worthy === worthy) continue;
    entry.told = routing.address;
    entry.worthy = worthy;
    post({ type: "hedge-view", id, address: routing.address, worthy });
  }
  if (watched.size === 0 && watchTimer) {
    clearInterval(watchTimer);
    watchTimer = undefined;
  }
}

async function runTask(task: TaskMessage): Promise<void> {
  const controller = new AbortController();
  running.set(task.id, controller);
  adoptCredentials(task.credentials);
  connection.s3.regions.adopt(task.work.ref.bucket, task.bucket);
  const routing: AttemptRouting = { avoid: new Set(task.avoid) };
  if (task.watch) {
    watched.set(task.id, { routing, worthy: false });
    watchTimer ??= setInterval(watchForHedges, HEDGE_CHECK_MS);
  }
  let ended: FromWorker;
  try {
    const work = task.work;
    const result =
      work.type === "range-to-file"
        ? await rangeToFile(task.id, work, routing, controller.signal)
        : work.type === "range-to-memory"
          ? await rangeToMemory(task.id, work, routing, controller.signal)
          : await upload(work, routing, controller.signal);
    ended = { type: "ended", id: task.id, result };
  } catch (err) {
    const failure = describeFailure(err);
    failure.address ??= routing.address;
    ended = { type: "ended", id: task.id, failure };
  }
  running.delete(task.id);
  watched.delete(task.id);
  const bucket = task.work.ref.bucket;
  post({ ...ended, bucket: { name: bucket, known: connection.s3.regions.knowledgeOf(bucket) } });
}

/** Tells the main thread what landed for task `id`, in steps of TELL_STEP; `flush` tells the rest. */
function landedTeller(id: number): { add(bytes: number, pieces?: DigestPiece[]): void; flush(): void } {
  let bytes = 0;
  let pieces: DigestPiece[] = [];
  const flush = (): void => {
    if (bytes === 0) return;
    post({ type: "landed", id, bytes, pieces });
    moved(bytes);
    bytes = 0;
    pieces = [];
  };
  return {
    add: (n, more) => {
      bytes += n;
      if (more) pieces.push(...more);
      if (bytes >= TELL_STEP) flush();
    },
    flush,
  };
}

async function rangeToFile(id: number, work: RangeToFile, routing: AttemptRouting, signal: AbortSignal): Promise<TaskResult> {
  const memory = freeSlices.pop() ?? Buffer.allocUnsafeSlow(2 * SLICE_BYTES);
  const tell = landedTeller(id);
  const slices = new RangeSlices([memory.subarray(0, SLICE_BYTES), memory.subarray(SLICE_BYTES)], work.start, async (offset, data) => {
    writeAt(work.fd, data, offset);
    tell.add(data.length, work.digest ? await digestPieces(work.digest, offset, data) : undefined);
  });
  try {
    const result = await getRange(connection.s3, {
      ref: work.ref,
      start: work.start,
      end: work.end,
      ifMatch: work.ifMatch,
      target: memory,
      offset: 0,
      slices,
      signal,
      routing,
      onBytes: (n) => slices.advance(n),
    });
    await slices.finish();
    return { etag: result.etag, objectSize: result.objectSize };
  } finally {
    // Nothing of this task may write once its end is told: the main thread may then close the file.
    await slices.settled();
    tell.flush();
    freeSlices.push(memory);
  }
}

async function rangeToMemory(id: number, work: RangeToMemory, routing: AttemptRouting, signal: AbortSignal): Promise<TaskResult> {
  const tell = landedTeller(id);
  try {
    const result = await getRange(connection.s3, {
      ref: work.ref,
      start: work.start,
      end: work.end,
      ifMatch: work.ifMatch,
      target: view(work.target),
      offset: 0,
      whole: work.whole,
      signal,
      routing,
      onBytes: (n) => tell.add(n),
    });
    const { etag, objectSize, lastModified, ranged, checksum, checksumType } = result;
    return { etag, objectSize, lastModified, ranged, checksum, checksumType };
  } finally {
    tell.flush(); // every byte in the buffer is told before the end, whatever the outcome: a retry continues after them
  }
}

/** UploadPart or PutObject of the bytes in a shared buffer. */
async function upload(work: PartUpload | ObjectPut, routing: AttemptRouting, signal: AbortSignal): Promise<TaskResult> {
  let echoed: { value?: ChecksumValue } | undefined;
  const call = { signal, routing, checksum: work.checksum, checksumChecked: work.checksumChecked, echoed: (value?: ChecksumValue) => (echoed = { value }) };
  const body = view(work.body);
  const etag =
    work.type === "upload-part"
      ? await uploadPart(connection.s3, work.ref, work.uploadId, work.partNumber, body, call)
      : await putObject(connection.s3, work.ref, body, work.attributes, call);
  moved(work.body.length);
  return { etag, echoed };
}

function view(bytes: SharedBytes): Buffer {
  return Buffer.from(bytes.memory, bytes.offset, bytes.length);
}

function writeAt(fd: number, data: Uint8Array, position: number): void {
  for (let done = 0; done < data.length; ) {
    done += writeSync(fd, data, done, writeCallLength(data.length - done), position + done);
  }
}

/** Counts bytes moved, for the test hook that makes a worker die mid-transfer. */
function moved(bytes: number): void {
  movedTotal += bytes;
  if (setup.exitAfterBytes !== undefined && movedTotal >= setup.exitAfterBytes) process.exit(70);
}

function post(message: FromWorker): void {
  port!.postMessage(message);
}
