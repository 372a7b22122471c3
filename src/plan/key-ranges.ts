/**
 * Cutting one listing into key ranges that can be listed at the same time.
 *
 * ListObjectsV2 is sequential: each page's continuation token comes from the
 * page before, so a million keys are a thousand round trips back to back.
 * But S3 returns keys in UTF-8 byte order and StartAfter starts a listing
 * anywhere, so the rest of the key space can be cut into ranges
 * (b0, b1], (b1, b2], …, (bn, ∞) and each range listed on its own.
 *
 * Where the cuts fall is a guess from the keys seen so far: each key is
 * read as a number (its characters as digits in the alphabet the first page
 * used), and the cuts are spaced one page's worth of keys apart at the
 * density seen so far. The guess only decides speed: whatever the keys
 * are, the ranges cover every one of them exactly once. A cut in an empty
 * stretch costs one empty page; a range that holds more than a page is
 * simply paged through.
 */

/** Order of a UTF-16 code unit as S3 orders keys (by UTF-8 bytes, i.e. by code point). */
function codePointOrder(unit: number): number {
  // Surrogates (characters above U+FFFF) sort after every BMP character in
  // UTF-8, but below U+E000–U+FFFF in UTF-16: move them past those.
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** Compares two keys the way S3 orders them: by their UTF-8 bytes. */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointOrder(x) - codePointOrder(y);
  }
  return a.length - b.length;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** What a listed range's last page showed past its end: the next key, no key at all, or nothing either way. */
export type Following = { key: string } | "none" | "unknown";

/** Characters used as digits: printable ASCII, so every cut is a plain string. */
const FIRST_DIGIT = 0x20;
const LAST_DIGIT = 0x7e;
/** How full a range is planned to be, of one page. */
const FILL = 0.95;
/** Digit values stay exact in a double: radix^width ≤ 2^52. */
const VALUE_BITS = 52;

/**
 * Proposes the cuts of one listing, one at a time, from the keys of its
 * first page, learning the keys' density from each range as it is listed.
 */
export class KeyRangePlanner {
  /** Value of the last cut proposed (the first page's last key, to begin with). */
  private last: number;
  private lastCut: string;
  /** Keys seen and the span of values they were seen over: the density so far. */
  private keysSeen: number;
  private spanSeen: number;
  /** Known to have no keys left to cut (within the stem). */
  private exhausted = false;

  private constructor(
    /** What every cut starts with: the listing's prefix and what the first page's keys all share. */
    private readonly stem: string,
    /** Digit characters in order (an index into it is a digit's value). */
    private readonly alphabet: number[],
    /** Digits read after the stem. */
    private readonly width: number,
    firstKey: string,
    lastKey: string,
    keys: number,
    private readonly pageSize: number,
  ) {
    this.last = this.valueOf(lastKey);
    this.lastCut = lastKey;
    this.keysSeen = keys - 1;
    this.spanSeen = this.last - this.valueOf(firstKey);
  }

  /**
   * A planner for the keys after a page of a listing of `prefix` (`keys`,
   * in order, cut short at `pageSize` keys); undefined when those keys say
   * nothing about the rest (fewer than two, no spread among them).
   *
   * The digits are the characters from one before the first position where
   * the page's keys differ (room for a carry: after "0999" comes "1000") to
   * the last such position, so a shared tail (".jpg") adds nothing. The cuts
   * all start with what comes before (the stem); keys past the stem's
   * stretch fall in the open-ended last range, where the listing plans again
   * from that range's first page.
   */
  static fromFirstPage(prefix: string, keys: readonly string[], pageSize: number): KeyRangePlanner | undefined {
    if (keys.length < 2) return undefined;
    const first = keys[0]!;
    const lastKey = keys[keys.length - 1]!;
    let differs = prefix.length;
    while (differs < first.length && differs < lastKey.length && first.charCodeAt(differs) === lastKey.charCodeAt(differs)) differs++;
    let start = Math.max(prefix.length, differs - 1);
    // Never between the two halves of a surrogate pair: a cut must be a valid string.
    if (start > prefix.length && isHighSurrogate(first.charCodeAt(start - 1))) start--;
    let end = start;
    for (const key of keys) {
      for (let i = Math.max(key.length, first.length) - 1; i >= end; i--) {
        if (key.charCodeAt(i) !== first.charCodeAt(i)) {
          end = i + 1;
          break;
        }
      }
    }
    const seen = new Set<number>();
    for (const key of keys) {
      for (let i = start; i < Math.min(end, key.length); i++) {
        const c = key.charCodeAt(i);
        if (c >= FIRST_DIGIT && c <= LAST_DIGIT) seen.add(c);
      }
    }
    const alphabet = [...seen].sort((a, b) => a - b);
    if (alphabet.length < 2) return undefined;
    const width = Math.min(end - start, Math.floor(VALUE_BITS / Math.log2(alphabet.length)));
    if (width < 1) return undefined;
    const planner = new KeyRangePlanner(first.slice(0, start), alphabet, width, first, lastKey, keys.length, pageSize);
    return planner.spanSeen > 0 ? planner : undefined;
  }

  /**
   * The key's position in [0, 1): the characters after the stem as digits
   * of a fraction. A character outside the alphabet counts as the highest
   * digit below it, which keeps the order (a larger key never gets a
   * smaller value).
   */
  valueOf(key: string): number {
    const radix = this.alphabet.length;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < this.width; i++) {
      scale /= radix;
      const at = this.stem.length + i;
      if (at >= key.length) break;
      value += this.digitOf(key.charCodeAt(at)) * scale;
    }
    return value;
  }

  private digitOf(c: number): number {
    // The highest digit ≤ c (0 below the alphabet), by binary search.
    if (c <= this.alphabet[0]!) return 0;
    let lo = 0;
    let hi = this.alphabet.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.alphabet[mid]! <= c) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The key (stem + `width` digits) nearest to `value`. */
  private keyAt(value: number): string {
    const radix = this.alphabet.length;
    const steps = radix ** this.width;
    const units = Math.min(Math.round(value * steps), steps - 1);
    const digits: number[] = new Array<number>(this.width);
    let rest = units;
    for (let i = this.width - 1; i >= 0; i--) {
      digits[i] = this.alphabet[rest % radix]!;
      rest = Math.floor(rest / radix);
    }
    return this.stem + String.fromCharCode(...digits);
  }

  /**
   * The next cut, about a page's worth of keys past the last one at the density
   * seen so far; undefined when the key space is used up (the range after
   * the last cut is open-ended).
   */
  nextCut(): string | undefined {
    if (this.exhausted) return undefined;
    const density = this.keysSeen / this.spanSeen;
    // A little under a page: a range one key over (a cut that lands just
    // before "0999.jpg" instead of after it) would cost a second request.
    const step = density > 0 ? (FILL * this.pageSize) / density : 1 - this.last;
    let value = this.last + step;
    if (value >= 1) return undefined;
    let cut = this.keyAt(value);
    if (compareKeys(cut, this.lastCut) <= 0) {
      // The step is below one digit at this width: move one whole digit on.
      value = this.last + this.alphabet.length ** -this.width;
      if (value >= 1) return undefined;
      cut = this.keyAt(value);
      if (compareKeys(cut, this.lastCut) <= 0) return undefined;
    }
    this.last = this.valueOf(cut);
    this.lastCut = cut;
    return cut;
  }

  /**
   * A range (after, upTo] was listed and held `keys`; `following` is what
   * the listing saw after it. No key lies between `upTo` and the following
   * key: when that stretch reaches past the cuts made so far, the next cut
   * starts from the following key instead of stepping through the gap one
   * empty range at a time; when no key follows (within the stem), cutting
   * is over ("ends the plan"): every later range is empty, and the
   * open-ended range takes the rest.
   */
  record(after: string, upTo: string, keys: number, following: Following): "ends the plan" | undefined {
    const span = this.valueOf(upTo) - this.valueOf(after);
    if (span > 0) {
      this.keysSeen += keys;
      this.spanSeen += span;
    }
    if (following === "unknown") return undefined;
    if (following === "none" || !following.key.startsWith(this.stem)) {
      this.exhausted = true;
      return "ends the plan";
    }
    if (compareKeys(following.key, this.lastCut) > 0) this.last = Math.max(this.last, this.valueOf(following.key));
    return undefined;
  }
}
