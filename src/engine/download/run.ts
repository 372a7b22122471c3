import type { ObjectRef } from "../../s3/operations.js";
import type { ObjectScope, TransferContext } from "../context.js";
import type { RangeVerifier } from "../integrity/verifier.js";
import type { DownloadSink } from "../sinks/download-sink.js";
import type { TaskGroup } from "../task-group.js";

export interface DownloadResult {
  size: number;
  etag: string;
  lastModified?: Date;
}

export interface DownloadOptions {
  /** Continue an interrupted download from what its file sink kept, instead of starting over. */
  resume?: boolean;
  /** Check a single-part object's bytes against its MD5 ETag. */
  verifyEtag?: boolean;
}

/** What one download run (one object, one attempt) shares between its range fetches. */
export interface Run {
  ctx: TransferContext;
  ref: ObjectRef;
  sink: DownloadSink;
  /** Cancels this object's requests; split once it takes more than one. */
  scope: ObjectScope;
  /** The scope's signal (read it where it is used: it changes on split). */
  readonly signal: AbortSignal;
  group: TaskGroup;
  /** Checks the bytes against the object's stored checksum, once that is known (undefined: nothing to check). */
  verifier: Promise<RangeVerifier | undefined>;
}

