import type { ChecksumValue } from "../../s3/operations.js";
import { describeFailure } from "../../s3/errors.js";
import { RequestError } from "../retry.js";

/**
 * Whether the endpoint checks the additional checksums s3x sends, learnt
 * from the first upload answer of a command: AWS echoes the checksum it
 * verified (x-amz-checksum-* on PutObject and UploadPart answers); servers
 * that ignore the header (radosgw 16, many S3-compatible stores) echo
 * nothing, and a few refuse it outright (refused: then "ignored" too). A
 * multipart upload with a checksum sends one part first, alone, until this
 * is known, so an endpoint that would ignore (or at Complete refuse) the
 * checksum is found out before the rest of the bytes go.
 * One per command: a field of its transfer context.
 *
 * What it decides (issue #24): a default checksum is sent only while it may
 * be checked; once "checked", uploads rely on it and, under
 * --payload-signing auto, skip the SHA-256 payload hash (s3/payload-signing.ts).
 */
export type Support = "checked" | "ignored";

export class ChecksumSupport {
  private known: Support | undefined;
  private wasRefused = false;
  private probing: Promise<void> | undefined;
  private endProbe: (() => void) | undefined;

  get status(): Support | undefined {
    return this.known;
  }

  /** The server answered a request carrying x-amz-checksum-* with an error that means "not supported". */
  get refused(): boolean {
    return this.wasRefused;
  }

  /**
   * Waits for this part's turn: "probe" when it is to find out (send it,
   * then call `learn`), else what is known.
   */
  async turn(): Promise<"probe" | Support> {
    for (;;) {
      if (this.known) return this.known;
      if (!this.probing) {
        this.probing = new Promise<void>((resolve) => (this.endProbe = resolve));
        return "probe";
      }
      await this.probing;
    }
  }

  /**
   * The probe's answer: whether the server echoed the checksum sent (`sent`)
   * — undefined when the request failed without an answer, so the next part
   * probes instead.
   */
  learn(sent: ChecksumValue | undefined, echoed: ChecksumValue | undefined | "no answer"): void {
    if (echoed !== "no answer" && sent && !this.wasRefused) this.known = echoed?.algorithm === sent.algorithm ? "checked" : "ignored";
    this.endProbing();
  }

  /** The server refused a checksum header (see isChecksumRefusal): it checks none. */
  refuse(): void {
    this.wasRefused = true;
    this.known = "ignored";
    this.endProbing();
  }

  private endProbing(): void {
    const end = this.endProbe;
    this.probing = undefined;
    this.endProbe = undefined;
    end?.();
  }
}

/**
 * An answer that says the server does not take x-amz-checksum-* headers at
 * all, as some S3-compatible stores answer them: 400 InvalidRequest or
 * InvalidArgument, 501 NotImplemented. Never BadDigest: that one is a
 * checksum checked and found wrong, the corruption the checksum is for.
 */
export function isChecksumRefusal(err: unknown): boolean {
  // Through the retry loop (a refusal is not retried) it arrives as a RequestError.
  const { status, code } = err instanceof RequestError ? err.failure : describeFailure(err);
  if (code === "NotImplemented" || status === 501) return true;
  return status === 400 && (code === "InvalidRequest" || code === "InvalidArgument");
}

/**
 * Sends an upload request (`send`) with the checksum it should carry. When
 * that checksum is only s3x's default and the server refuses the header,
 * the request goes again without it and the command learns that the server
 * checks none: the refusal means "unsupported", not a failed transfer. A
 * checksum the user asked for (--checksum-algorithm) is never dropped: the
 * refusal is the command's error then. If the request without the checksum
 * fails too, that failure is the one reported.
 */
export async function withChecksumFallback<C, T>(support: ChecksumSupport, checksum: C | undefined, requested: boolean, send: (checksum: C | undefined) => Promise<T>): Promise<T> {
  try {
    return await send(checksum);
  } catch (err) {
    if (checksum === undefined || requested || !isChecksumRefusal(err)) throw err;
    const answer = await send(undefined);
    support.refuse();
    return answer;
  }
}

/** The server did not check a checksum the user asked for: the upload stops. */
export class ChecksumIgnoredError extends Error {
  readonly code = "S3X_CHECKSUM_IGNORED";
}
