/**
 * What a scenario left behind, in a form the two sides can be compared by:
 * a bucket's objects (key, bytes, the attributes S3 stores with them) and a
 * local directory's entries (relative path, bytes).
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { GetObjectAclCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import type { TestS3 } from "../support/s3-server.js";

/** Entries by name (object key or relative path), each described by a JSON-comparable record. */
export type State = Map<string, Record<string, unknown>>;

/** Marks a bucket that does not exist (distinct from an empty one). */
const NO_BUCKET = "(bucket does not exist)";

export async function bucketState(s3: TestS3, bucket: string, withAcl: boolean): Promise<State> {
  const state: State = new Map();
  try {
    await s3.client.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    state.set(NO_BUCKET, {});
    return state;
  }
  let token: string | undefined;
  do {
    const page = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const { Key } of page.Contents ?? []) {
      if (Key !== undefined) state.set(Key, await describeObject(s3, bucket, Key, withAcl));
    }
    token = page.NextContinuationToken;
  } while (token);
  return state;
}

async function describeObject(s3: TestS3, bucket: string, key: string, withAcl: boolean): Promise<Record<string, unknown>> {
  const obj = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const body = Buffer.from(await obj.Body!.transformToByteArray());
  const described: Record<string, unknown> = {
    size: body.length,
    sha256: createHash("sha256").update(body).digest("hex").slice(0, 16),
    contentType: obj.ContentType,
    cacheControl: obj.CacheControl,
    contentDisposition: obj.ContentDisposition,
    contentEncoding: obj.ContentEncoding,
    contentLanguage: obj.ContentLanguage,
    expires: obj.ExpiresString,
    storageClass: obj.StorageClass,
    metadata: obj.Metadata ?? {},
  };
  if (withAcl) {
    const acl = await s3.client.send(new GetObjectAclCommand({ Bucket: bucket, Key: key }));
    described.grants = (acl.Grants ?? []).map((g) => `${g.Grantee?.Type}:${g.Grantee?.ID ?? g.Grantee?.URI}:${g.Permission}`).sort();
  }
  return described;
}

/** Every file (with its bytes' hash) and directory (name ending in "/") under dir. */
export async function localState(dir: string): Promise<State> {
  const state: State = new Map();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name).slice(dir.length + 1);
    if (entry.isDirectory()) state.set(`${path}/`, {});
    else if (entry.isFile()) {
      const body = await readFile(join(dir, path));
      state.set(path, { size: body.length, sha256: createHash("sha256").update(body).digest("hex").slice(0, 16) });
    } else state.set(path, { type: "not a regular file" });
  }
  return state;
}

/**
 * The differences between aws-cli's state and s3x's, one line each. s3x
 * stores the file's mtime in an `mtime` metadata entry on uploads (rclone's
 * convention) where aws-cli stores nothing: that entry is accepted when it
 * is a number of seconds and aws-cli's object has none.
 */
export function compareStates(what: string, aws: State, s3x: State): string[] {
  const out: string[] = [];
  for (const name of [...new Set([...aws.keys(), ...s3x.keys()])].sort()) {
    const a = aws.get(name);
    const s = s3x.get(name);
    if (!a) out.push(`${what}: ${JSON.stringify(name)} only in s3x's`);
    else if (!s) out.push(`${what}: ${JSON.stringify(name)} only in aws's`);
    else {
      const left = JSON.stringify(a);
      const right = JSON.stringify(withoutOwnMtime(s, a));
      if (left !== right) out.push(`${what}: ${JSON.stringify(name)} differs\n    aws: ${left}\n    s3x: ${right}`);
    }
  }
  return out;
}

function withoutOwnMtime(s3x: Record<string, unknown>, aws: Record<string, unknown>): Record<string, unknown> {
  const meta = s3x.metadata as Record<string, string> | undefined;
  const awsMeta = aws.metadata as Record<string, string> | undefined;
  if (!meta || meta.mtime === undefined || awsMeta?.mtime !== undefined || !/^\d+(\.\d+)?$/.test(meta.mtime)) return s3x;
  const { mtime: _mtime, ...rest } = meta;
  return { ...s3x, metadata: rest };
}
