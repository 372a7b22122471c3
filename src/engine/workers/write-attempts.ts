import { putObject, uploadPart, type ChecksumValue, type ObjectAttributes, type ObjectRef } from "../../s3/operations.js";
import type { AttemptRouting } from "../../net/routing.js";
import type { TransferContext } from "../context.js";
import { sharedBytes, usableWorkers, type WorkerPool } from "./pool.js";
import type { ObjectPut, PartUpload } from "./protocol.js";

/** One UploadPart or PutObject attempt's call: as s3/object-write's uploadPart and putObject take it. */
export interface WriteCall {
  signal: AbortSignal;
  routing: AttemptRouting;
  checksum?: ChecksumValue;
  checksumChecked: boolean;
  echoed: (value: ChecksumValue | undefined) => void;
}

/**
 * Sends one attempt of UploadPart: in a worker thread when the run has them
 * and the part's buffer is shared with them (its TLS, signing and socket
 * writes then cost the main thread nothing), else here.
 */
export async function sendPartAttempt(ctx: TransferContext, dest: ObjectRef, uploadId: string, partNumber: number, body: Buffer, call: WriteCall): Promise<string> {
  const pool = usableWorkers(ctx.workers);
  const shared = pool && sharedBytes(body);
  if (!pool || !shared) return uploadPart(ctx.s3, dest, uploadId, partNumber, body, call);
  return inWorker(pool, { type: "upload-part", ref: dest, uploadId, partNumber, body: shared, checksum: call.checksum, checksumChecked: call.checksumChecked }, call);
}

/**
 * Sends one attempt of PutObject (a small file's whole body): in a worker
 * thread when the user asked for workers (WorkerPool.carriesWholeObjects)
 * and the body is shared with them, else here.
 */
export async function sendPutAttempt(ctx: TransferContext, dest: ObjectRef, body: Buffer, attributes: ObjectAttributes, call: WriteCall): Promise<string> {
  const pool = ctx.workers?.carriesWholeObjects ? usableWorkers(ctx.workers) : undefined;
  const shared = pool && sharedBytes(body);
  if (!pool || !shared) return putObject(ctx.s3, dest, body, attributes, call);
  return inWorker(pool, { type: "put-object", ref: dest, body: shared, attributes, checksum: call.checksum, checksumChecked: call.checksumChecked }, call);
}

/** One write attempt in a worker, followed by the tail hedger (a part may get a duplicate: multipart-upload's repeatHedge); the echoed checksum comes back to `call`. */
async function inWorker(pool: WorkerPool, work: PartUpload | ObjectPut, call: WriteCall): Promise<string> {
  const result = await pool.run({ work, avoid: call.routing.avoid, signal: call.routing.signal ?? call.signal, hedgeRouting: call.routing });
  if (result.echoed) call.echoed(result.echoed.value);
  return result.etag;
}
