/** Which version of an object a download is of. */
export interface ObjectIdentity {
  etag: string;
  size: number;
}

/** What an interrupted download left behind: the object it was of and the ranges on disk. */
export interface PartialDownload {
  identity: ObjectIdentity;
  done: { offset: number; length: number }[];
  /** Where (for messages). */
  location: string;
}

/**
 * Where the parts of one download go. Parts may be written in any order and
 * concurrently; `write` resolves once the part's buffer may be reused.
 */
export interface DownloadSink {
  /**
   * Optional, called first: takes the destination for this run, or throws
   * when another run holds it. `debug` hears what is worth a --debug line.
   * `lazily`: the sink takes it only once it needs it (a journal).
   */
  claim?(debug: (line: string) => void, lazily?: boolean): Promise<void>;
  /** Called once, when the object's size is known; `resumable`: worth journaling for --resume. */
  open(size: number, identity: ObjectIdentity, resumable?: boolean): Promise<void>;
  write(index: number, offset: number, data: Buffer): Promise<void>;
  /**
   * Optional: resolves when part `index` may be fetched. An in-order sink
   * uses it to bound how far ahead of the reader the downloads may run.
   */
  waitForRoom?(index: number): Promise<void>;
  /** Every byte arrived: make the result visible under its final name. */
  commit(info: { lastModified?: Date }): Promise<void>;
  /**
   * The download failed or was cancelled: leave nothing behind, unless
   * `keep` asks to keep what can be resumed (returns whether it did).
   */
  discard(keep?: boolean): Promise<boolean | void>;

  /** In-order sinks (streams): sees every byte once, in order, as it is written. */
  observeInOrder?(observer: (data: Buffer) => void): void;

  /**
   * Sinks that take positional writes into one open file (a ranged download
   * to a file): its descriptor, for a worker thread to write ranges into
   * (engine/workers), once open; undefined when writes must go through
   * `write`. Such a range is then reported with `landed`.
   */
  positionalFd?(): number | undefined;
  /** Bytes [offset, offset + length) were written into positionalFd() by another thread: record them as on disk. */
  landed?(offset: number, length: number): void;

  /** Resumable sinks (files): what an earlier run left, continuing it, reading it back. */
  previous?(readOnly?: boolean): Promise<PartialDownload | undefined>;
  forgetPrevious?(): Promise<void>;
  reopen?(): Promise<void>;
  read?(offset: number, target: Buffer): Promise<void>;
}
