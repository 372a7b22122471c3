/**
 * Where the parts of one download go. Parts may be written in any order and
 * concurrently; `write` resolves once the part's buffer may be reused.
 */
export interface DownloadSink {
  /** Called once, when the object's size is known. */
  open(size: number): Promise<void>;
  write(index: number, offset: number, data: Buffer): Promise<void>;
  /**
   * Optional: resolves when part `index` may be fetched. An in-order sink
   * uses it to bound how far ahead of the reader the downloads may run.
   */
  waitForRoom?(index: number): Promise<void>;
  /** Every byte arrived: make the result visible under its final name. */
  commit(info: { lastModified?: Date }): Promise<void>;
  /** The download failed or was cancelled: leave nothing behind. */
  discard(): Promise<void>;
}
