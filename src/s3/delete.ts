import { send } from "./request.js";
import { demandsContentMd5, withContentMd5 } from "./content-md5.js";
import { DeleteObjectCommand, DeleteObjectsCommand, type S3Client } from "./sdk.js";

/** Deleting objects: one key (DeleteObject), or up to 1,000 in one request (DeleteObjects). */

export interface DeleteFailure {
  key: string;
  code: string;
  message: string;
}

/** Clients whose server refused DeleteObjects without Content-MD5 (see s3/content-md5.ts). */
const contentMd5Clients = new WeakSet<S3Client>();

/**
 * Deletes up to 1,000 keys in one request; returns the per-key failures.
 * A server that demands Content-MD5 gets it from then on, and this request
 * is sent again at once with it.
 */
export async function deleteObjects(client: S3Client, bucket: string, keys: string[], signal?: AbortSignal): Promise<DeleteFailure[]> {
  const input = () => ({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } });
  let out;
  if (contentMd5Clients.has(client)) {
    out = await send(client, new DeleteObjectsCommand(withContentMd5(input())), signal);
  } else {
    try {
      out = await send(client, new DeleteObjectsCommand(input()), signal);
    } catch (err) {
      if (!demandsContentMd5(err)) throw err;
      contentMd5Clients.add(client);
      out = await send(client, new DeleteObjectsCommand(withContentMd5(input())), signal);
    }
  }
  return (out.Errors ?? []).map((e) => ({ key: e.Key ?? "", code: e.Code ?? "Error", message: e.Message || e.Code || "delete failed" }));
}

export async function deleteObject(client: S3Client, bucket: string, key: string, signal?: AbortSignal): Promise<void> {
  await send(client, new DeleteObjectCommand({ Bucket: bucket, Key: key }), signal);
}
