import { setMaxListeners } from "node:events";
import { connect, type S3Connection } from "../s3/client.js";
import { createContext, type TransferContext } from "../engine/context.js";
import { concurrencyOf, maxMemoryOf, retryPolicy, s3Settings, type CommonArgs } from "./options.js";
import { InterruptError } from "./errors.js";
import { ProgressDisplay } from "./output.js";

/**
 * What one command run holds: the S3 connection, the shared transfer
 * context, the progress display and the Ctrl-C handling. A first SIGINT or
 * SIGTERM cancels the transfers (which abort their multipart uploads and
 * remove temporary files); a second one exits at once.
 */
export class Session {
  readonly connection: S3Connection;
  readonly context: TransferContext;
  readonly progress: ProgressDisplay;
  private readonly controller = new AbortController();
  private readonly onSignal = (name: NodeJS.Signals): void => {
    if (this.controller.signal.aborted) process.exit(name === "SIGINT" ? 130 : 143);
    this.controller.abort(new InterruptError(name === "SIGINT" ? "SIGINT" : "SIGTERM"));
  };

  constructor(readonly args: CommonArgs, options: { progressAllowed: boolean }) {
    const concurrency = concurrencyOf(args);
    const maxMemory = maxMemoryOf(args);
    const retry = retryPolicy(args);
    this.connection = connect(s3Settings(args, concurrency));
    const showBar = options.progressAllowed && args.progress && !args.quiet && process.stderr.isTTY === true;
    this.progress = new ProgressDisplay(showBar);
    this.context = createContext({ client: this.connection.client, concurrency, maxMemory, retry, signal: this.controller.signal, progress: this.progress });
    setMaxListeners(0, this.controller.signal);
    process.on("SIGINT", this.onSignal);
    process.on("SIGTERM", this.onSignal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async close(): Promise<void> {
    this.progress.stop();
    process.off("SIGINT", this.onSignal);
    process.off("SIGTERM", this.onSignal);
    await this.connection.close();
  }
}
