import {
  listParts,
  type ChecksumAlgorithm,
  type ChecksumType,
  type ChecksumValue,
  type CompletedPart,
  type ObjectAttributes,
  type ObjectRef,
} from "../s3/operations.js";
import { childController } from "./child-controller.js";
import { queued, retryHooks, type TransferContext } from "./context.js";
import { checksumValue, digestOf, fullObjectDigest, isCrc, type RangeDigest } from "./integrity/checksums.js";
import { ChecksumIgnoredError, withChecksumFallback } from "./integrity/checksum-support.js";
import { isInterruption } from "./resume/interruption.js";
import { partMatches, type ResumePoint } from "./resume/upload-resume.js";
import { removeUploadRecord, saveUploadRecord, type UploadRecord } from "./resume/upload-journal.js";
import { abortQuietly, completeUpload, createUpload, LostCompletionError } from "./multipart-commit.js";
import { PartReceipts } from "./part-receipts.js";
import { withRetries } from "./retry.js";
import { repeatHedge } from "./hedge.js";
import { TaskGroup } from "./task-group.js";
import { sendPartAttempt } from "./workers/write-attempts.js";
import { s3Url } from "./object-url.js";

/** What a multipart upload gives the object and how it treats failure. */
export interface MultipartOptions {
  attributes: ObjectAttributes;
  /** Leave a failed multipart upload in place (for inspection) instead of aborting it. */
  keepFailedUpload: boolean;
  /** Additional checksum sent with every part and (for CRCs) the whole object; undefined: none. */
  checksum?: ChecksumAlgorithm;
  /**
   * The user asked for `checksum` (--checksum-algorithm, $S3X_CHECKSUM_ALGORITHM):
   * an endpoint that does not check it stops a multipart upload after its
   * first part. Otherwise (a default) the upload goes on without it.
   */
  checksumRequested?: boolean;
}

/** What the part producer of a multipart upload sees. */
export interface MultipartSession {
  readonly signal: AbortSignal;
  readonly failed: boolean;
  /**
   * Queues part `number`: `prepare` fills the buffer (inside the request
   * slot, so reads overlap network transfers), then it is uploaded with
   * retries and the buffer goes back to the budget.
   */
  send(number: number, offset: number, buffer: Buffer, prepare: () => Promise<void>, length?: number): void;
  /**
   * Runs `check` once every part was prepared and sent, before
   * CompleteMultipartUpload: a failure fails (and aborts) the upload
   * instead of completing it (a source that changed while it was read).
   */
  beforeComplete(check: () => Promise<void>): void;
}

/** What makes a multipart upload resumable: its local record and, when resuming, the parts S3 holds. */
export interface Resumable {
  template: Omit<UploadRecord, "uploadId" | "started">;
  point?: ResumePoint;
}

/**
 * Create → parts (produced by `produce`) → Complete. Each part carries its
 * checksum in a header; for CRCs the full-object value is combined from the
 * part digests and sent with Complete, so S3 checks every byte it stored.
 *
 * On failure the upload is aborted so no orphaned parts keep costing money —
 * except when a resumable upload was interrupted (Ctrl-C, network loss) after
 * storing parts, or stored them all and Complete failed: then it stays, with
 * its local record, for --resume.
 */
export async function multipartUpload(
  ctx: TransferContext,
  dest: ObjectRef,
  options: MultipartOptions,
  produce: (session: MultipartSession) => Promise<void>,
  resumable?: Resumable,
): Promise<void> {
  const { controller, dispose } = childController(ctx.signal);
  const signal = controller.signal;
  const hooks = retryHooks(ctx, signal);
  const point = resumable?.point;
  const support = ctx.checksumSupport;
  const requested = options.checksumRequested === true;
  // A resumed upload keeps the algorithm it was created with: S3 demands the same one on every part.
  // A default checksum the server has shown it ignores is left out from the start.
  let algorithm = point ? point.checksum : options.checksum && (requested || support.status !== "ignored") ? options.checksum : undefined;
  const uploadId =
    point?.uploadId ??
    (await withChecksumFallback(support, algorithm, requested, (wanted) => {
      algorithm = wanted;
      return createUpload(ctx, dest, options.attributes, wanted ? { algorithm: wanted, type: checksumTypeOf(wanted) } : undefined, hooks);
    }));
  const checksumType = algorithm ? checksumTypeOf(algorithm) : undefined;
  let recordFile = point?.recordFile;
  if (resumable && !recordFile) {
    recordFile = await saveUploadRecord({
      ...resumable.template,
      partSize: point?.partSize ?? resumable.template.partSize,
      checksum: algorithm,
      uploadId,
      started: new Date().toISOString(),
    });
  }
  const partNumbers: number[] = [];
  const partChecksums = new Map<number, ChecksumValue>();
  const receipts = new PartReceipts();
  let bytes = 0;
  // Part digests by offset, combined into the full-object CRC at Complete.
  const ranges: RangeDigest[] = [];
  const group = new TaskGroup(controller);
  /** Set once every part is stored and Complete is sent. */
  let completing = false;
  const checks: (() => Promise<void>)[] = [];

  /**
   * The checksum to send with a part: none once the endpoint proved it
   * ignores them (and the user did not insist); `checked` once it proved it
   * verifies them (then --payload-signing auto skips the SHA-256).
   */
  const checksumToSend = async (digestChecksum: ChecksumValue | undefined): Promise<{ checksum?: ChecksumValue; probe: boolean; checked: boolean }> => {
    if (!digestChecksum) return { probe: false, checked: false };
    const turn = await support.turn();
    if (turn === "checked") return { checksum: digestChecksum, probe: false, checked: true };
    if (signal.aborted) {
      // A probe that will not be sent is handed on, or every part waiting for its answer waits forever
      // (and Node, its event loop empty, exits 0 on a failed upload).
      if (turn === "probe") support.learn(undefined, "no answer");
      signal.throwIfAborted();
    }
    if (turn === "probe") return { checksum: digestChecksum, probe: true, checked: false };
    if (requested) throw checksumIgnored(digestChecksum);
    return { probe: false, checked: false };
  };

  const sendPart = async (number: number, offset: number, body: Buffer): Promise<void> => {
    // Digests the server will not see are not computed (a resumed part is still matched by its own).
    const wanted = algorithm !== undefined && (requested || point !== undefined || support.status !== "ignored");
    const digest = algorithm && wanted ? await digestOf(algorithm, body) : undefined;
    if (digest && checksumType === "FULL_OBJECT") ranges.push({ offset, length: body.length, digest });
    const computed: ChecksumValue | undefined = algorithm && digest ? checksumValue(algorithm, digest) : undefined;
    const stored = point?.stored.get(number);
    if (stored && partMatches(stored, body, computed)) {
      // Already in S3 and verified against the file: reuse it, send nothing.
      receipts.stored(number, stored.etag);
      if (computed) partChecksums.set(number, computed);
      partNumbers.push(number);
      bytes += body.length;
      ctx.stats.reusedParts++;
      ctx.stats.reusedBytes += body.length;
      return;
    }
    const { checksum, probe, checked } = await checksumToSend(computed);
    let echoed: ChecksumValue | undefined | "no answer" = "no answer";
    try {
      await withRetries(`UploadPart ${number} of ${s3Url(dest)}`, ctx.retry, async (_n, routing) => {
        ctx.stats.requests++;
        // Every copy (retry or hedged duplicate) reports its own answer: the last one acknowledged is what S3 keeps.
        const answered = receipts.sent(number);
        try {
          const tag = await withChecksumFallback(support, support.refused ? undefined : checksum, requested, (sent) =>
            sendPartAttempt(ctx, dest, uploadId, number, body, { signal, routing, checksum: sent, checksumChecked: checked, echoed: (value) => (echoed = value) }),
          );
          answered(tag);
          ctx.stats.bytesSent += body.length;
          return tag;
        } catch (err) {
          answered();
          throw err;
        }
      }, hooks, repeatHedge<string>(ctx.hedger, body.length)); // fan-out hook: tail parts may be hedged (engine/hedge.ts)
    } finally {
      if (probe) support.learn(checksum, echoed);
    }
    if (probe && support.status === "ignored") {
      // The user asked for a checksum the server does not check: stop here, before any other part goes.
      if (requested && checksum) throw checksumIgnored(checksum);
      // A default one goes quietly: the parts are protected by the signed payload (plain HTTP) or TLS instead.
      ctx.debug?.(`the server does not check ${checksum?.algorithm} checksums (x-amz-checksum-*)${support.refused ? ", it refuses them" : ""}: uploading without them`);
    }
    if (checksum && !support.refused) partChecksums.set(number, checksum);
    partNumbers.push(number);
    bytes += body.length;
  };

  const session: MultipartSession = {
    signal,
    get failed() {
      return group.failed;
    },
    send(number, offset, buffer, prepare, length = buffer.length) {
      const body = buffer.subarray(0, length);
      group.add(
        queued(ctx, signal, async () => {
          await prepare();
          await sendPart(number, offset, body);
          ctx.progress.addDone(length);
        }).finally(() => ctx.memory.release(buffer)),
      );
    },
    beforeComplete(check) {
      checks.push(check);
    },
  };
  try {
    try {
      await produce(session);
    } catch (err) {
      controller.abort(err);
      await group.settle();
      throw group.firstError ?? err;
    }
    await group.wait();
    for (const check of checks) await check();
    const completed = await completedParts(ctx, dest, uploadId, partNumbers, receipts, support.status === "ignored" ? new Map() : partChecksums, signal);
    const checked = algorithm !== undefined && support.status !== "ignored";
    const full =
      checked && algorithm && checksumType === "FULL_OBJECT"
        ? checksumValue(algorithm, await fullObjectDigest(algorithm, ranges, ranges.reduce((sum, r) => sum + r.length, 0)))
        : undefined;
    completing = true;
    await completeUpload(ctx, dest, uploadId, completed, bytes, { fullObjectChecksum: full, checksumType: checked ? checksumType : undefined, mayDropChecksums: !requested }, hooks);
    if (recordFile) await removeUploadRecord(recordFile);
  } catch (err) {
    if (recordFile && partNumbers.length > 0 && isInterruption(err, ctx.signal)) {
      ctx.notify(
        `kept the interrupted upload of ${s3Url(dest)} (upload ID ${uploadId}, ${partNumbers.length} parts stored): ` +
          `run the same command with --resume to finish it, or s3x rm --uploads ${s3Url(dest)} to discard it`,
      );
    } else if (recordFile && completing && !(err instanceof LostCompletionError)) {
      // Every part is stored: aborting would throw away what a --resume
      // completes without sending a byte (the Complete may fail for the
      // server's reasons, not the parts').
      ctx.notify(
        `kept the upload of ${s3Url(dest)} (upload ID ${uploadId}, all ${partNumbers.length} parts stored): ` +
          `run the same command with --resume to complete it, or s3x rm --uploads ${s3Url(dest)} to discard it`,
      );
    } else if (!options.keepFailedUpload) {
      await abortQuietly(ctx, dest, uploadId);
      if (recordFile) await removeUploadRecord(recordFile);
    }
    throw err;
  } finally {
    dispose();
  }
}

/** CRCs combine into a FULL_OBJECT checksum S3 checks at Complete; SHA-256 can only be a COMPOSITE of the parts'. */
function checksumTypeOf(algorithm: ChecksumAlgorithm): ChecksumType {
  return isCrc(algorithm) ? "FULL_OBJECT" : "COMPOSITE";
}

function checksumIgnored(sent: ChecksumValue): ChecksumIgnoredError {
  return new ChecksumIgnoredError(
    `the server did not confirm the ${sent.algorithm} checksum of the first part (it does not check x-amz-checksum-*); ` +
      `stopped before sending the rest (run with --checksum-algorithm none to upload without it)`,
  );
}

/**
 * The parts to complete with: each with the ETag S3 acknowledged last
 * (engine/part-receipts.ts); where a hedged copy went unanswered, the one
 * ListParts shows S3 kept.
 */
async function completedParts(
  ctx: TransferContext,
  dest: ObjectRef,
  uploadId: string,
  numbers: readonly number[],
  receipts: PartReceipts,
  checksums: ReadonlyMap<number, ChecksumValue>,
  signal: AbortSignal,
): Promise<CompletedPart[]> {
  const uncertain = receipts.uncertain();
  const listed = new Map<number, string>();
  if (uncertain.length > 0) {
    const parts = await withRetries(`ListParts ${s3Url(dest)}`, ctx.retry, (_n, routing) => {
      ctx.stats.requests++;
      return listParts(ctx.s3, dest, uploadId, { signal, routing });
    }, { signal });
    for (const p of parts) if (uncertain.includes(p.partNumber)) listed.set(p.partNumber, p.etag);
  }
  return numbers.map((number) => ({ partNumber: number, etag: listed.get(number) ?? receipts.etagOf(number) ?? "", checksum: checksums.get(number) }));
}
