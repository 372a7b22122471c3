import { compareKeys, KeyRangePlanner, type Following } from "../plan/key-ranges.js";
import { listObjectsPage, listPages, type ListPage } from "../s3/list.js";
import { childController } from "./child-controller.js";
import type { TransferContext } from "./context.js";
import { withRetries } from "./retry.js";

/** ListObjectsV2's most keys per page, and the default (aws-cli's --page-size). */
export const MAX_PAGE_SIZE = 1000;
/** Key ranges listed at once, the one being read included: at most by default (--list-ranges), and at first. */
export const DEFAULT_LIST_RANGES = 16;
const FIRST_RANGES_AT_ONCE = 2;
/** Pages a range may list before it is read (memory: --list-ranges × this × page size keys). */
const PAGES_AHEAD = 2;

type Page = ListPage & { nextToken?: string };
/** The listing's prefix, its keys per page, and the most ranges listed at once. */
export interface RangeShape {
  prefix: string;
  pageSize: number;
  atMost: number;
}
/** Where a request starts: after a continuation token, or after a key. */
type Start = { token?: string; startAfter?: string };

/**
 * ListObjectsV2 page by page, each page retried on its own: the one way every
 * command (cp -r, sync, ls, rm) lists, so they page, retry and count alike.
 * With a delimiter, sub-prefixes come back as `prefixes` (ls without -r).
 *
 * A recursive listing that does not fit in one page is cut into key ranges
 * listed at once (plan/key-ranges.ts), 2 to 16 at a time, and its pages are
 * still yielded in key order: a prefix of a million keys is not a
 * thousand round trips back to back. Listings with a delimiter page as
 * before, and so do directory buckets, which do not list in key order.
 */
export async function* listObjectPages(ctx: TransferContext, bucket: string, prefix: string, delimiter?: string): AsyncGenerator<ListPage> {
  const pages = pagesOf(ctx, bucket, prefix, delimiter);
  if (isDirectoryBucket(bucket)) yield* pages;
  else yield* inKeyOrder(pages, `s3://${bucket}/${prefix}`);
}

/**
 * The pages as they are, after checking that every key (and every common
 * prefix) comes after the one before, in S3's order, across pages: a
 * listing that skips back or repeats was not read whole, and nothing
 * (sync --delete least of all) may act on it.
 */
async function* inKeyOrder(pages: AsyncGenerator<ListPage>, where: string): AsyncGenerator<ListPage> {
  let lastKey: string | undefined;
  let lastPrefix: string | undefined;
  for await (const page of pages) {
    for (const { key } of page.objects) {
      if (lastKey !== undefined && compareKeys(key, lastKey) <= 0) throw new ListingOrderError(where, lastKey, key);
      lastKey = key;
    }
    for (const prefix of page.prefixes) {
      if (lastPrefix !== undefined && compareKeys(prefix, lastPrefix) <= 0) throw new ListingOrderError(where, lastPrefix, prefix);
      lastPrefix = prefix;
    }
    yield page;
  }
}

/** A listing whose keys did not come in S3's order: it cannot be trusted to be whole. */
export class ListingOrderError extends Error {
  constructor(where: string, before: string, after: string) {
    super(`listing ${where}: ${JSON.stringify(after)} came after ${JSON.stringify(before)}, out of S3's key order; the listing cannot be trusted to be whole, so nothing was done with it`);
    this.name = "ListingOrderError";
  }
}

async function* pagesOf(ctx: TransferContext, bucket: string, prefix: string, delimiter?: string): AsyncGenerator<ListPage> {
  const { controller, dispose } = childController(ctx.signal);
  const pageSize = ctx.listPageSize ?? MAX_PAGE_SIZE;
  const atMost = ctx.listRanges ?? DEFAULT_LIST_RANGES;
  const list = (start: Start): Promise<Page> =>
    withRetries(`ListObjectsV2 s3://${bucket}/${prefix}`, ctx.retry, (_n, routing) => {
      ctx.stats.requests++;
      return listObjectsPage(ctx.s3, bucket, prefix, { ...start, delimiter, maxKeys: ctx.listPageSize, signal: controller.signal, routing });
    }, { signal: controller.signal });
  try {
    const first = await list({});
    yield { objects: first.objects, prefixes: first.prefixes };
    if (!first.nextToken) return;
    const keys = first.objects.map((o) => o.key);
    const planner = delimiter === undefined && atMost > 1 && !isDirectoryBucket(bucket) ? KeyRangePlanner.fromFirstPage(prefix, keys, pageSize) : undefined;
    if (!planner) {
      yield* listPages((token) => list({ token: token ?? first.nextToken }));
      return;
    }
    yield* rangePages(list, { prefix, pageSize, atMost }, planner, keys, first.nextToken, (reason) => ctx.notify(`s3://${bucket}/${prefix}: ${reason}`));
  } finally {
    // A caller that stops early (ls | head, a failed transfer) cancels the ranges still listing.
    controller.abort(new Error("listing no longer needed"));
    dispose();
  }
}

/** Directory buckets (S3 Express One Zone) list in no particular order: ranges would not partition them. */
function isDirectoryBucket(bucket: string): boolean {
  return bucket.endsWith("--x-s3");
}

/**
 * The rest of a listing after its first page (`firstKeys`, continued by
 * `token`), as key ranges listed at once (cutPages). Ranges are only right
 * if the server lists in UTF-8 byte order and honours StartAfter: each range
 * checks every page it gets (RangeListing), so a page that breaks the order
 * is never passed on. Should a server do so, the listing starts over page by
 * page and skips as many keys as were passed on, checking that the last one
 * skipped is the last one passed on (a listing that changed meanwhile fails).
 */
export async function* rangePages(
  list: (start: Start) => Promise<Page>,
  shape: RangeShape,
  planner: KeyRangePlanner,
  firstKeys: readonly string[],
  token: string,
  onFallback: (reason: string) => void = () => {},
): AsyncGenerator<ListPage> {
  let passedOn = firstKeys.length;
  let lastPassedOn = firstKeys[firstKeys.length - 1]!;
  try {
    for await (const page of cutPages(list, shape, planner, lastPassedOn, token)) {
      yield page;
      passedOn += page.objects.length;
      if (page.objects.length > 0) lastPassedOn = page.objects[page.objects.length - 1]!.key;
    }
  } catch (err) {
    if (!(err instanceof OutOfOrderError)) throw err;
    onFallback(`${err.message}; listing page by page instead`);
    let skip = passedOn;
    for await (const page of listPages((next) => list(next === undefined ? {} : { token: next }))) {
      const objects = skip > 0 ? page.objects.slice(skip) : page.objects;
      if (skip > 0 && skip <= page.objects.length && page.objects[skip - 1]!.key !== lastPassedOn) {
        // Keys were added or deleted (rm -r deletes as it lists): skipping by
        // count would now skip keys never passed on. Say so; never skip them silently.
        throw new Error(`the listing changed while it was restarted page by page (after skipping ${passedOn} keys it reached ${JSON.stringify(page.objects[skip - 1]!.key)}, not ${JSON.stringify(lastPassedOn)}): run the command again`);
      }
      skip = Math.max(0, skip - page.objects.length);
      if (objects.length > 0 || page.prefixes.length > 0) yield { objects, prefixes: page.prefixes };
    }
  }
}

/** The server listed a key out of S3's order after StartAfter (or ignored StartAfter). */
class OutOfOrderError extends Error {
  constructor(after: string, got: string) {
    super(`the server listed ${JSON.stringify(got)} after ${JSON.stringify(after)}, out of S3's key order`);
  }
}

/**
 * The keys after `after` (continued by `token`) as ranges between the
 * planner's cuts, several listed at once and read in order. The first range
 * continues the token. When the planner runs out of cuts, the open-ended
 * last range lists one page, and the rest is planned again from it.
 */
async function* cutPages(
  list: (start: Start) => Promise<Page>,
  { prefix, pageSize, atMost }: RangeShape,
  firstPlanner: KeyRangePlanner,
  after: string,
  token: string,
): AsyncGenerator<ListPage> {
  let planner: KeyRangePlanner | undefined = firstPlanner;
  const ranges: RangeListing[] = [];
  let lower = after;
  let start: Start | undefined = { token };
  let lastIssued: RangeListing | undefined;
  const startNext = (): void => {
    if (!planner || !start) return;
    const from = lower;
    const upTo = planner.nextCut();
    const plan = planner;
    const record = (keys: number, following: Following): boolean => upTo !== undefined && plan.record(from, upTo, keys, following) === "ends the plan";
    lastIssued = new RangeListing(list, start, from, upTo, record, upTo === undefined ? lastIssued : undefined);
    ranges.push(lastIssued);
    if (upTo === undefined) planner = undefined;
    else {
      lower = upTo;
      start = { startAfter: upTo };
    }
  };
  // Slow start, as TCP's: a plan proves itself before it gets more ranges at
  // once. Where a stretch of keys ends sooner than the first page suggested
  // (folders of a few pages each), the ranges already under way come back
  // empty: few at first, `atMost` only once ranges keep coming back full.
  const first = Math.min(FIRST_RANGES_AT_ONCE, atMost);
  let atOnce = first;
  while (ranges.length < atOnce && planner) startNext();
  while (ranges.length > 0) {
    const range = ranges.shift()!;
    yield* range.pages();
    if (range.keys > 0) atOnce = Math.min(atMost, atOnce + 1);
    if (range.endsPlan) {
      // The ranges cut after this one lie between its end and the next key
      // there is: empty. Drop them (their answers are not awaited); the
      // open-ended range starts from this one's overflow, saving a round trip.
      ranges.length = 0;
      planner = undefined;
      if (range.following !== "none") {
        lastIssued = new RangeListing(list, { startAfter: range.upTo! }, range.upTo!, undefined, () => false, range);
        ranges.push(lastIssued);
      }
    }
    const rest = range.rest;
    if (rest) {
      // The open-ended range stopped after one page: plan the keys after it.
      planner = KeyRangePlanner.fromFirstPage(prefix, rest.keys, pageSize);
      if (!planner) {
        yield* listPages((next) => list({ token: next ?? rest.token }));
        return;
      }
      lower = rest.keys[rest.keys.length - 1]!;
      start = { token: rest.token };
      // The range before the next ones is this one (it has no overflow).
      lastIssued = range;
      atOnce = first;
    }
    while (ranges.length < atOnce && planner) startNext();
  }
}

/**
 * One key range (after, upTo] listed page by page as soon as it is made,
 * holding at most PAGES_AHEAD pages until they are read. An open-ended
 * range (no `upTo`) lists one page only and leaves the rest to be planned.
 */
class RangeListing {
  /** An open-ended range cut short: its page's keys and where the listing goes on. */
  rest: { keys: string[]; token: string } | undefined;
  /** Keys listed so far. */
  keys = 0;
  /**
   * The keys of the last page past the range's end, and where that page
   * went on: the start of what follows, for an open-ended range after this one.
   */
  overflow: Page | undefined;
  /** What the listing showed after this range's end ("unknown" until it has ended, or when the end was a key of the range). */
  following: Following = "unknown";
  /** Nothing follows this range within its plan's stretch: the ranges cut after it are empty. */
  endsPlan = false;
  /** Settles when the range has listed everything it will. */
  readonly settled: Promise<void>;
  /** The last key the server sent (the range's lower end, to begin with). */
  private lastSeen: string;
  private readonly ready: ListPage[] = [];
  private finished = false;
  private failure: Error | undefined;
  /** Wakes the reader (a page arrived, or the range ended). */
  private wakeReader: (() => void) | undefined;
  /** Wakes the lister (the reader took a page). */
  private wakeLister: (() => void) | undefined;

  constructor(
    private readonly list: (start: Start) => Promise<Page>,
    start: Start,
    private readonly after: string,
    readonly upTo: string | undefined,
    /** Told how the range ended; true when that ends the plan (no key follows within its stretch). */
    private readonly done: (keys: number, following: Following) => boolean,
    /** For an open-ended range: the range just before, whose overflow may be this range's first page. */
    private readonly before?: RangeListing,
  ) {
    this.lastSeen = after;
    this.settled = this.run(start);
  }

  /**
   * The next page from `next`; an open-ended range's first page is the
   * range before's overflow when it has one (the keys after its end, just
   * what this range would ask for), which saves a round trip at the end of
   * each stretch of keys.
   */
  private async fetch(next: Start, first: boolean): Promise<Page> {
    // Only the range that ends where this one starts has the keys it wants.
    if (first && this.before && this.before.upTo === this.after) {
      await this.before.settled;
      if (this.before.overflow) return this.before.overflow;
    }
    return this.list(next);
  }

  private async run(start: Start): Promise<void> {
    try {
      let next: Start | undefined = start;
      let first = true;
      while (next) {
        while (this.ready.length >= PAGES_AHEAD) await new Promise<void>((resolve) => (this.wakeLister = resolve));
        const page = await this.fetch(next, first);
        first = false;
        let objects = page.objects;
        // Every key after the one before, in S3's order (a server that ignores
        // StartAfter, or orders keys otherwise, must not make ranges overlap or miss).
        let previous = this.lastSeen;
        for (const object of objects) {
          if (compareKeys(object.key, previous) <= 0) throw new OutOfOrderError(previous, object.key);
          previous = object.key;
        }
        this.lastSeen = previous;
        next = page.nextToken ? { token: page.nextToken } : undefined;
        if (this.upTo !== undefined) {
          const upTo = this.upTo;
          const beyond = objects.findIndex((o) => compareKeys(o.key, upTo) > 0);
          if (beyond >= 0) {
            // The page ran past the range's end: the rest belongs to later ranges.
            this.following = { key: objects[beyond]!.key };
            this.overflow = { objects: objects.slice(beyond), prefixes: [], nextToken: page.nextToken };
            objects = objects.slice(0, beyond);
            next = undefined;
          } else if (!next) this.following = "none";
          else if (objects.length > 0 && compareKeys(objects[objects.length - 1]!.key, upTo) === 0) next = undefined;
        } else if (next) {
          // Open-ended: one page, and the rest is planned again from it.
          this.rest = { keys: objects.map((o) => o.key), token: page.nextToken! };
          next = undefined;
        }
        this.keys += objects.length;
        this.ready.push({ objects, prefixes: page.prefixes });
        this.wakeReader?.();
      }
      this.endsPlan = this.done(this.keys, this.following);
    } catch (err) {
      this.failure = err as Error;
    } finally {
      this.finished = true;
      this.wakeReader?.();
    }
  }

  async *pages(): AsyncGenerator<ListPage> {
    for (;;) {
      const page = this.ready.shift();
      if (page) {
        this.wakeLister?.();
        if (page.objects.length > 0 || page.prefixes.length > 0) yield page;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.finished) return;
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
  }
}
