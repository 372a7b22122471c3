/** An object in a bucket. */
export interface ObjectRef {
  bucket: string;
  key: string;
}

export type { Call } from "./request.js";
