/**
 * Which ETag each part of a multipart upload is completed with, when copies
 * of one part may race (a hedged duplicate, engine/hedge.ts). S3 keeps the
 * copy it stored last, and with SSE-KMS (or any store whose part ETags are
 * not MD5s) two copies of the same bytes get different ETags; Complete must
 * name the stored one. So every copy's answer is recorded as it arrives, the
 * last one acknowledged wins, and a part where a racing copy was cut off
 * before its answer (S3 may still have stored it, after the other) is
 * flagged: its ETag is asked of S3 (ListParts) before Complete.
 */
export class PartReceipts {
  private readonly etags = new Map<number, string>();
  private readonly sending = new Map<number, number>();
  private readonly raced = new Set<number>();
  private readonly unanswered = new Set<number>();

  /** A copy of part `number` is going out; call the returned function with its ETag when answered, or with nothing when it failed. */
  sent(number: number): (etag?: string) => void {
    const copies = (this.sending.get(number) ?? 0) + 1;
    this.sending.set(number, copies);
    if (copies > 1) this.raced.add(number);
    let settled = false;
    return (etag) => {
      if (settled) return;
      settled = true;
      this.sending.set(number, (this.sending.get(number) ?? 1) - 1);
      if (etag !== undefined) this.etags.set(number, etag);
      else this.unanswered.add(number);
    };
  }

  /** Records the ETag of a part S3 already holds (a resumed upload's verified part). */
  stored(number: number, etag: string): void {
    this.etags.set(number, etag);
  }

  /** The ETag to complete part `number` with: the last one S3 acknowledged. */
  etagOf(number: number): string | undefined {
    return this.etags.get(number);
  }

  /** Parts whose copies raced and one went unanswered: which copy S3 kept is for ListParts to say. */
  uncertain(): number[] {
    return [...this.raced].filter((n) => this.unanswered.has(n)).sort((a, b) => a - b);
  }
}
