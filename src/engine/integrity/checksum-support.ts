import type { ChecksumValue } from "../../s3/operations.js";

/**
 * Whether the endpoint checks the additional checksums s3x sends, learnt
 * from the first upload answer of a command: AWS echoes the checksum it
 * verified (x-amz-checksum-* on PutObject and UploadPart answers); servers
 * that ignore the header (radosgw 16, many S3-compatible stores) echo
 * nothing. A multipart upload with a checksum sends one part first, alone,
 * until this is known, so an endpoint that would ignore (or at Complete
 * refuse) the checksum is found out before the rest of the bytes go.
 * One per command: a field of its transfer context.
 */
export type Support = "checked" | "ignored";

export class ChecksumSupport {
  private known: Support | undefined;
  private probing: Promise<void> | undefined;
  private endProbe: (() => void) | undefined;

  get status(): Support | undefined {
    return this.known;
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
    if (echoed !== "no answer" && sent) this.known = echoed?.algorithm === sent.algorithm ? "checked" : "ignored";
    const end = this.endProbe;
    this.probing = undefined;
    this.endProbe = undefined;
    end?.();
  }
}

/** The server did not check a checksum the user asked for: the upload stops. */
export class ChecksumIgnoredError extends Error {
  readonly code = "S3X_CHECKSUM_IGNORED";
}
