export function formatRate(bytesPerSecond: number): string {
  return `${(bytesPerSecond / 1e6).toFixed(1)} MB/s`;
}

/**
 * What a command prints on stdout. When the reader goes away (`| head`), the
 * next write fails with EPIPE: `onBroken` then cancels the run as Ctrl-C
 * would (cp and sync clean up what they started), and s3x ends quietly with
 * 141. `write` resolves once Node has handed the text to the pipe, so a
 * caller that awaits it (ls, page by page) stays at most a page ahead of a
 * slow reader instead of buffering the whole listing.
 */
export class StdoutLines {
  private failure: Error | undefined;
  private listening = false;

  constructor(private readonly onBroken: (err: Error) => void) {}

  write(text: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (!this.listening) {
      this.listening = true;
      // A failed write is emitted as 'error' as well, a tick after its
      // callback: with no listener that second report would crash s3x.
      process.stdout.on("error", (err: Error) => this.fail(err));
    }
    return new Promise<void>((resolve, reject) => {
      process.stdout.write(text, (err) => {
        if (!err) return resolve();
        this.fail(err);
        reject(err);
      });
    });
  }

  /** Writes without waiting: a failure still cancels the run through onBroken. */
  print(text: string): void {
    this.write(text).catch(() => undefined);
  }

  /**
   * Resolves once everything written so far has been taken by the OS or has
   * failed. Writes to a pipe complete later, in the event loop: a command
   * that printed its lines and decided its exit status at once would exit 0
   * although its reader had gone (`rm -r --dryrun … | head -1`). After this,
   * such a failure has cancelled the run through onBroken.
   */
  settled(): Promise<void> {
    if (this.failure || !this.listening) return Promise.resolve();
    // An empty write completes after every earlier one, and fails if they did.
    return this.write("").catch(() => undefined);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.onBroken(err);
  }
}
