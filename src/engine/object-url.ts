import type { ObjectRef } from "../s3/operations.js";

/** How messages and errors name an object: s3://bucket/key, as the user writes it. */
export function s3Url(ref: ObjectRef): string {
  return `s3://${ref.bucket}/${ref.key}`;
}
