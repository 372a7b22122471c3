import type { ChecksumAlgorithm, ObjectRef } from "../../s3/operations.js";
import type { S3Settings } from "../../s3/client.js";
import type { RequestFailure } from "../../s3/errors.js";
import type { AddressStats } from "../../net/pools.js";
import type { SigningCredentials } from "../../s3/sigv4.js";

/**
 * The messages between the main thread and the data-plane worker threads
 * (engine/workers/pool.ts, worker-thread.ts). Everything here is plain data:
 * it crosses threads by structured clone.
 */

/** What a worker is started with (workerData): how to reach S3, without anything that is a function or a native handle. */
export interface WorkerSetup {
  /** The run's connection settings, without `net.debug` and `net.tls.secureContext` (the worker makes its own from `net.tls.ca`). */
  settings: S3Settings;
  /** Test hook: this worker exits (as if it crashed) once it has written this many bytes. */
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

/** Main → worker: GET bytes [start, end] of `ref` and write them at the same offsets into `fd` (a file descriptor of this process). */
export interface RangeToFileTask {
  type: "range-to-file";
  id: number;
  ref: ObjectRef;
  start: number;
  end: number;
  ifMatch?: string;
  fd: number;
  digest?: DigestPlan;
  /** Addresses this request already failed on (AttemptRouting.avoid). */
  avoid: string[];
  /** The run's current credentials (undefined: anonymous). The main thread alone runs the provider chain. */
  credentials?: SigningCredentials;
}

/** Main → worker: stop task `id` (its answer still comes, once nothing of it can write any more). */
export interface CancelTask {
  type: "cancel";
  id: number;
}

/** Main → worker: send your connection pools' per-address counters (--json, --debug). */
export interface StatsRequest {
  type: "stats";
  id: number;
}

export type ToWorker = RangeToFileTask | CancelTask | StatsRequest;

/** Worker → main: `bytes` more bytes of task `id` are on disk (in order, right after the ones before). */
export interface Written {
  type: "written";
  id: number;
  bytes: number;
  pieces: DigestPiece[];
}

/** Worker → main: task `id` ended; every byte it wrote was announced by `written` before this. */
export interface TaskEnded {
  type: "ended";
  id: number;
  /** Success: what the answer said. */
  result?: { etag: string; objectSize: number };
  /** Failure: the request's failure as the retry loop judges it, with the address it went to. */
  failure?: RequestFailure;
}

/** Worker → main: the answer to a StatsRequest. */
export interface StatsAnswer {
  type: "stats";
  id: number;
  stats: AddressStats[];
}

export type FromWorker = Written | TaskEnded | StatsAnswer;
