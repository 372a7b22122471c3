import type { ChecksumAlgorithm, ChecksumType, ChecksumValue, ObjectAttributes, ObjectRef } from "../../s3/operations.js";
import type { S3Settings } from "../../s3/client.js";
import type { RequestFailure } from "../../s3/errors.js";
import type { SigningCredentials } from "../../s3/sigv4.js";
import type { AddressStats, KeptSessionsLocation } from "../../net/pools.js";

/**
 * The messages between the main thread and the data-plane worker threads
 * (engine/workers/pool.ts, worker-thread.ts). Everything here is plain data:
 * it crosses threads by structured clone. Bytes never do: a range to a file
 * is written by the worker, and part buffers are SharedArrayBuffers both
 * threads see (engine/memory.ts makes them so when a run has workers).
 */

/** What a worker is started with (workerData): how to reach S3, without anything that is a function or a native handle. */
export interface WorkerSetup {
  /** The run's connection settings, without `net.debug`, `net.tls.contexts` (the worker makes its own from `net.tls.ca`) or `net.tls.sessions` (see keptSessions). */
  settings: S3Settings;
  /**
   * Where the run keeps TLS sessions between runs, if it does: the worker
   * opens the same store, so its connections resume them as the main
   * thread's do (no CAs to load, no certificate to check again).
   */
  keptSessions?: KeptSessionsLocation;
  /** Whether the run prints --debug lines: the worker's pools then send theirs (DebugLine). */
  debug: boolean;
  /** The worker's number, for its --debug lines. */
  index: number;
  /** Test hook: this worker exits (as if it crashed) once it has moved this many bytes. */
  exitAfterBytes?: number;
}

/** How a range's checksum is taken in the worker: per piece, cut at multiples of `pieceBoundary` (a COMPOSITE checksum's part size). */
export interface DigestPlan {
  algorithm: ChecksumAlgorithm;
  pieceBoundary?: number;
}

/** One digested piece of a range: bytes [offset, offset + length) of the object. */
export interface DigestPiece {
  offset: number;
  length: number;
  digest: Uint8Array;
}

/** A window of a part buffer both threads see. */
export interface SharedBytes {
  memory: SharedArrayBuffer;
  offset: number;
  length: number;
}

/** GET bytes [start, end] of `ref` and write them at the same offsets into `fd` (a file descriptor of this process). */
export interface RangeToFile {
  type: "range-to-file";
  ref: ObjectRef;
  start: number;
  end: number;
  ifMatch?: string;
  fd: number;
  digest?: DigestPlan;
}

/** GET bytes [start, end] of `ref` into `target` (its first byte gets `start`). */
export interface RangeToMemory {
  type: "range-to-memory";
  ref: ObjectRef;
  start: number;
  end: number;
  ifMatch?: string;
  target: SharedBytes;
  /** Ask for the whole object, without a Range header, when `start` is 0 (s3/object-read RangeRequest.whole). */
  whole?: boolean;
}

/** UploadPart `partNumber` of `uploadId` with the bytes in `body`. */
export interface PartUpload {
  type: "upload-part";
  ref: ObjectRef;
  uploadId: string;
  partNumber: number;
  body: SharedBytes;
  checksum?: ChecksumValue;
  checksumChecked: boolean;
}

/** PutObject of a small file's whole body, in `body`. */
export interface ObjectPut {
  type: "put-object";
  ref: ObjectRef;
  body: SharedBytes;
  attributes: ObjectAttributes;
  checksum?: ChecksumValue;
  checksumChecked: boolean;
}

export type TaskWork = RangeToFile | RangeToMemory | PartUpload | ObjectPut;

/** Main → worker: one attempt of a request. */
export interface TaskMessage {
  type: "task";
  id: number;
  work: TaskWork;
  /** Addresses this request already failed on (AttemptRouting.avoid). */
  avoid: string[];
  /** The run's current credentials (undefined: anonymous). The main thread alone runs the provider chain. */
  credentials?: SigningCredentials;
  /** What the main thread's requester knows of the bucket (BucketRegions.knowledgeOf): its region, learnt once per run. */
  bucket: { settled: boolean; region?: string };
  /** The main thread's tail hedger follows this attempt: tell it where it went and when it straggles (HedgeView). */
  watch: boolean;
}

/** Main → worker: stop task `id` (its answer still comes, once nothing of it can touch its file or buffer any more). */
export interface CancelTask {
  type: "cancel";
  id: number;
}

/** Main → worker: send your connection pools' per-address counters (--json, --debug). */
export interface StatsRequest {
  type: "stats";
  id: number;
}

/** Either way: a thread's pools put `address` on the bad list; the others follow (one view of address health). */
export interface AddressBad {
  type: "address-bad";
  address: string;
  problem: string;
}

/** Main → worker: a hedged duplicate of task `id` answered first (TrackedRequest.lostToHedge). */
export interface LostToHedge {
  type: "lost-to-hedge";
  id: number;
}

/** Main → worker: a hedged duplicate sent through this worker to `address` settled; count it there (--json). */
export interface CountHedge {
  type: "count-hedge";
  address: string;
  won: boolean;
}

export type ToWorker = TaskMessage | CancelTask | StatsRequest | AddressBad | LostToHedge | CountHedge;

/** Worker → main: `bytes` more bytes of a range landed (on disk, or in its buffer), in order, right after the ones before. */
export interface Landed {
  type: "landed";
  id: number;
  bytes: number;
  pieces: DigestPiece[];
}

/** What a task's request answered. */
export interface TaskResult {
  etag: string;
  /** Ranges: the object's size, its time, whether the answer was ranged, the stored checksum it carried. */
  objectSize?: number;
  lastModified?: Date;
  ranged?: boolean;
  checksum?: ChecksumValue;
  checksumType?: ChecksumType;
  /** Uploads: the checksum the server echoed, when it answered (`value` undefined: it echoed none). */
  echoed?: { value?: ChecksumValue };
}

/** Worker → main: task `id` ended; all it landed was told by `landed` before this, and nothing of it runs any more. */
export interface TaskEnded {
  type: "ended";
  id: number;
  result?: TaskResult;
  /** The request's failure as the retry loop judges it, with the address it went to. */
  failure?: RequestFailure;
  /** What the worker's requester now knows of the task's bucket (BucketRegions.knowledgeOf). */
  bucket?: { name: string; known: { settled: boolean; region?: string } };
}

/** Worker → main: the answer to a StatsRequest. */
export interface StatsAnswer {
  type: "stats";
  id: number;
  stats: AddressStats[];
}

/** Worker → main: a --debug line of the worker's pools (addresses marked bad, added, retired). */
export interface DebugLine {
  type: "debug";
  line: string;
}

/** Worker → main: where a watched attempt went, and whether the straggler watch finds it worth a hedge now. */
export interface HedgeViewUpdate {
  type: "hedge-view";
  id: number;
  address: string;
  worthy: boolean;
}

export type FromWorker = Landed | TaskEnded | StatsAnswer | AddressBad | DebugLine | HedgeViewUpdate;
