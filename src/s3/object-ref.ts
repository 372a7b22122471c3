/** An object in a bucket. */
export interface ObjectRef {
  bucket: string;
  key: string;
}

/** What every operation may be given: a signal that cancels it. */
export interface Call {
  signal?: AbortSignal;
}
