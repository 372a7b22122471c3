import { MAX_SINGLE_COPY_SIZE, partAt, planParts, uploadPartSize } from "../plan/parts.js";
import {
  copyObject,
  headObject,
  uploadPartCopy,
  type CompletedPart,
  type ObjectAttributes,
  type ObjectInfo,
  type ObjectRef,
  type StorageSettings,
} from "../s3/operations.js";
import { childController } from "./child-controller.js";
import { queued, retryHooks, waitForQueueRoom, type TransferContext } from "./context.js";
import { abortQuietly, completeUpload, createUpload } from "./multipart-commit.js";
import { RequestError, withRetries } from "./retry.js";
import { describeFailure } from "../s3/errors.js";
import { TaskGroup } from "./task-group.js";
import { s3Url } from "./object-url.js";

export interface CopyOptions {
  partSize?: number;
  /** Objects up to this size are copied with one CopyObject (S3 allows up to 5 GiB). */
  copyThreshold: number;
  /** New attributes for the copy; undefined keeps the source's. */
  attributes?: ObjectAttributes;
  /**
   * `attributes` are only the ones given: the copy keeps the source's
   * Content-Type, Cache-Control, Content-Disposition, Content-Encoding,
   * Content-Language, Expires and metadata where none is given (aws-cli's
   * --copy-props default), read with a HEAD of the source.
   */
  mergeWithSource?: boolean;
  /** ACL and encryption of the copy, whether or not its attributes are the source's. */
  storage?: StorageSettings;
  keepFailedUpload: boolean;
  /**
   * The source's size as a listing gave it (a recursive copy or sync): an
   * object small enough for one CopyObject then needs no HEAD first, one
   * request per object instead of two, as aws-cli copies a listing.
   */
  listedSize?: number;
}

/**
 * Server-side copy: no byte passes through s3x. One CopyObject up to the
 * copy threshold (5 GiB, S3's limit for it, by default); above that,
 * concurrent UploadPartCopy ranges, each pinned to the source's ETag so a
 * source replaced mid-copy fails. The size decides which: from the listing
 * when there was one (options.listedSize), else from a HEAD.
 */
export async function copyS3Object(ctx: TransferContext, source: ObjectRef, dest: ObjectRef, options: CopyOptions): Promise<{ size: number }> {
  const hooks = retryHooks(ctx);
  const src = s3Url(source);
  const singleCopyLimit = Math.min(options.copyThreshold, MAX_SINGLE_COPY_SIZE);
  const headSource = () =>
    withRetries(`HEAD ${src}`, ctx.retry, (_n, routing) => {
      ctx.stats.requests++;
      return headObject(ctx.s3, source, { signal: ctx.signal, routing });
    }, hooks);
  const copyOnce = (sourceEtag: string | undefined, attributes: ObjectAttributes | undefined) =>
    queued(ctx, ctx.signal, () =>
      withRetries(`CopyObject ${src}`, ctx.retry, (_n, routing) => {
        ctx.stats.requests++;
        return copyObject(ctx.s3, source, dest, attributes, sourceEtag, { signal: ctx.signal, routing, storage: options.storage });
      }, hooks),
    );
  const copyWhole = async (size: number, sourceEtag: string | undefined, attributes: ObjectAttributes | undefined): Promise<{ size: number }> => {
    ctx.progress.addTotal(size);
    try {
      await copyOnce(sourceEtag, attributes);
    } catch (err) {
      if (!sourceEtag || !(await conditionWronglyRefused(err, sourceEtag, headSource))) throw err;
      ctx.notify(`CopyObject ${src}: the server refused the copy's ETag condition (412) although the source is unchanged; copying again without the condition`);
      await copyOnce(undefined, attributes);
    }
    ctx.progress.addDone(size);
    return { size };
  };
  const merging = options.mergeWithSource === true && options.attributes !== undefined;
  // Unpinned: one CopyObject is atomic, so the copy is whichever whole
  // version the source holds then (a newer one than listed, if it changed).
  // Attributes merged with the source's need its HEAD, and are pinned to it.
  if (!merging && options.listedSize !== undefined && options.listedSize <= singleCopyLimit) return copyWhole(options.listedSize, undefined, options.attributes);

  const info = await headSource();
  const given = merging ? withSourceAttributes(options.attributes!, info) : options.attributes;
  if (info.size <= singleCopyLimit) return copyWhole(info.size, info.etag, given);
  ctx.progress.addTotal(info.size);

  // UploadPartCopy copies bytes only: the source's attributes are set when the upload is created.
  const attributes = given ?? { ...info.headers, contentType: info.contentType, metadata: info.metadata, ...options.storage };
  const { controller, dispose } = childController(ctx.signal);
  const signal = controller.signal;
  const partHooks = { ...hooks, signal };
  // Created and completed as an upload's parts are: a lost answer to either is handled there.
  const uploadId = await createUpload(ctx, dest, attributes, undefined, partHooks);
  const group = new TaskGroup(controller);
  const completed: CompletedPart[] = [];
  // Set once the server has refused a condition the source met: the parts
  // are then copied without it, and the source checked again at the end.
  let unconditional = false;
  try {
    const plan = planParts(info.size, uploadPartSize(info.size, options.partSize));
    for (let i = 0; i < plan.count && !group.failed; i++) {
      const part = partAt(plan, i);
      const range = { start: part.offset, end: part.offset + part.length - 1 };
      // Copies hold no buffers, so only the queue bounds them: queue more
      // only when the queued ones are running.
      await waitForQueueRoom(ctx);
      group.add(
        queued(ctx, signal, async () => {
          const copyPart = (condition: string) =>
            withRetries(`UploadPartCopy ${part.number} ${src}`, ctx.retry, (_n, routing) => {
              ctx.stats.requests++;
              return uploadPartCopy(ctx.s3, source, dest, uploadId, part.number, range, condition, { signal, routing });
            }, partHooks);
          let etag: string;
          const conditioned = !unconditional;
          try {
            etag = await copyPart(conditioned ? info.etag : "");
          } catch (err) {
            if (!conditioned || !(await conditionWronglyRefused(err, info.etag, headSource))) throw err;
            if (!unconditional) ctx.notify(`UploadPartCopy ${src}: the server refused the copy's ETag condition (412) although the source is unchanged; copying the parts again without the condition (and checking the source's ETag before completing)`);
            unconditional = true;
            etag = await copyPart("");
          }
          completed.push({ partNumber: part.number, etag });
          ctx.progress.addDone(part.length);
        }),
      );
    }
    await group.wait();
    if (unconditional && (await headSource()).etag !== info.etag) {
      throw new Error(`UploadPartCopy ${src}: the object changed during the transfer (ETag ${info.etag}, then another)`);
    }
    await completeUpload(ctx, dest, uploadId, completed, info.size, {}, partHooks);
    return { size: info.size };
  } catch (err) {
    controller.abort(err);
    await group.settle();
    if (!options.keepFailedUpload) await abortQuietly(ctx, dest, uploadId);
    throw group.firstError ?? err;
  } finally {
    dispose();
  }
}

/**
 * The attributes given, completed with the source's where one is not given
 * (aws-cli's SetMetadataDirectivePropsSubscriber: the same seven). Storage
 * class, ACL and encryption are not the source's: only what was given.
 */
function withSourceAttributes(given: ObjectAttributes, info: ObjectInfo): ObjectAttributes {
  const headers = info.headers ?? {};
  return {
    ...given,
    contentType: given.contentType ?? info.contentType,
    cacheControl: given.cacheControl ?? headers.cacheControl,
    contentDisposition: given.contentDisposition ?? headers.contentDisposition,
    contentEncoding: given.contentEncoding ?? headers.contentEncoding,
    contentLanguage: given.contentLanguage ?? headers.contentLanguage,
    expires: given.expires ?? headers.expires,
    metadata: given.metadata ?? info.metadata,
  };
}

/**
 * Whether a failed copy was a 412 to its x-amz-copy-source-if-match although
 * a fresh HEAD shows the source still has that ETag: some servers mishandle
 * the condition (multipart ETags), and would refuse every copy.
 */
async function conditionWronglyRefused(err: unknown, sourceEtag: string, headSource: () => Promise<{ etag: string }>): Promise<boolean> {
  const code = err instanceof RequestError ? err.failure.code : describeFailure(err).code;
  if (code !== "PreconditionFailed") return false;
  return (await headSource()).etag === sourceEtag;
}
