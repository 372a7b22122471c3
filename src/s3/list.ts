import { send } from "./request.js";
import { ListBucketsCommand, ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from "./sdk.js";

export interface ListedObject {
  key: string;
  size: number;
  lastModified: Date;
  etag: string;
}

export interface ListPage {
  objects: ListedObject[];
  /** Common prefixes ("directories") when listing with a delimiter. */
  prefixes: string[];
}

/**
 * Pages through ListObjectsV2. Each page is yielded as soon as it arrives,
 * so transfers start while the listing is still paging, and the next page is
 * requested before this one is yielded: the server prepares page n+1 while
 * the caller prints, compares or queues page n (a listing is otherwise one
 * round trip plus one parse per 1,000 keys, back to back). Memory holds two
 * pages at most, never the whole bucket. `list` performs one call (with
 * retries chosen by the caller).
 */
export async function* listPages(
  list: (token: string | undefined) => Promise<ListPage & { nextToken?: string }>,
): AsyncGenerator<ListPage> {
  // A page asked for ahead may fail while the caller still works on the one
  // before (for seconds, during transfers): marked handled at once, so Node
  // does not report it as unhandled (and exit); the loop still awaits it and
  // throws the failure there. A caller that stops early never sees it.
  const ask = (token: string | undefined): Promise<ListPage & { nextToken?: string }> => {
    const page = list(token);
    page.catch(() => undefined);
    return page;
  };
  let next: Promise<ListPage & { nextToken?: string }> | undefined = ask(undefined);
  while (next) {
    const page: ListPage & { nextToken?: string } = await next;
    next = page.nextToken ? ask(page.nextToken) : undefined;
    yield { objects: page.objects, prefixes: page.prefixes };
  }
}

export async function listObjectsPage(
  client: S3Client,
  bucket: string,
  prefix: string,
  options: { delimiter?: string; token?: string; startAfter?: string; maxKeys?: number; signal?: AbortSignal },
): Promise<ListPage & { nextToken?: string }> {
  const input = { Bucket: bucket, Prefix: prefix || undefined, Delimiter: options.delimiter, ContinuationToken: options.token, StartAfter: options.startAfter, MaxKeys: options.maxKeys };
  const out = await send(client, new ListObjectsV2Command(input), options.signal);
  checkListingPage(out, prefix);
  return {
    objects: (out.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0), etag: o.ETag ?? "" })),
    prefixes: (out.CommonPrefixes ?? []).map((p) => p.Prefix ?? ""),
    nextToken: out.IsTruncated ? out.NextContinuationToken : undefined,
  };
}

/** A ListObjectsV2 answer that does not hold together: acting on it could skip or delete keys. */
export class ListingPageError extends Error {
  constructor(problem: string) {
    super(`the listing page cannot be trusted: ${problem}; nothing was done with it`);
    this.name = "ListingPageError";
  }
}

/** The parts of a ListObjectsV2 output that say whether the page is whole. */
interface PageFields {
  IsTruncated?: boolean;
  NextContinuationToken?: string;
  KeyCount?: number;
  Contents?: { Key?: string }[];
  CommonPrefixes?: { Prefix?: string }[];
}

/**
 * Checks a page before anything uses it, whichever parser read it: a page
 * read as fewer keys than it holds would make `sync --delete` delete the
 * rest, and one truncated without a token would end the listing early.
 * IsTruncated must be there (an answer without it is not a listing),
 * KeyCount (when sent) must count the keys and prefixes read, a truncated
 * page must say where to go on, every entry must have a key, and every key
 * and common prefix must start with the `prefix` asked for: `rm -r` would
 * delete a key named from outside it, and `cp -r`/`sync` cut the prefix's
 * length off it and write it under a wrong name (aws-cli does both).
 */
export function checkListingPage(out: PageFields, prefix = ""): void {
  if (typeof out.IsTruncated !== "boolean") throw new ListingPageError("the answer has no IsTruncated (not a ListBucketResult?)");
  const read = (out.Contents?.length ?? 0) + (out.CommonPrefixes?.length ?? 0);
  if (out.KeyCount !== undefined && out.KeyCount !== read) throw new ListingPageError(`the server's KeyCount is ${out.KeyCount} but the page holds ${read} keys and prefixes`);
  if (out.IsTruncated && !out.NextContinuationToken) throw new ListingPageError("IsTruncated is true but there is no NextContinuationToken");
  if (out.Contents?.some((o) => typeof o.Key !== "string" || o.Key === "")) throw new ListingPageError("an entry has no Key");
  const outside = out.Contents?.find((o) => !o.Key!.startsWith(prefix))?.Key ?? out.CommonPrefixes?.find((p) => !(p.Prefix ?? "").startsWith(prefix))?.Prefix;
  if (outside !== undefined) throw new ListingPageError(`it names ${JSON.stringify(outside)}, outside the prefix ${JSON.stringify(prefix)} that was listed`);
}

export async function listBuckets(client: S3Client): Promise<{ name: string; created?: Date }[]> {
  const out = await send(client, new ListBucketsCommand({}));
  return (out.Buckets ?? []).map((b) => ({ name: b.Name ?? "", created: b.CreationDate }));
}

export interface InProgressUpload {
  key: string;
  uploadId: string;
  initiated?: Date;
}

/** One page of ListMultipartUploads. */
export async function listUploadsPage(
  client: S3Client,
  bucket: string,
  prefix: string,
  marker: { key?: string; uploadId?: string },
  signal?: AbortSignal,
): Promise<{ uploads: InProgressUpload[]; next?: { key?: string; uploadId?: string } }> {
  const out = await send(client, new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix || undefined, KeyMarker: marker.key, UploadIdMarker: marker.uploadId }), signal);
  // rm --uploads aborts what is listed: an upload of a key outside the prefix is not its to abort.
  const outside = out.Uploads?.find((u) => !(u.Key ?? "").startsWith(prefix));
  if (outside) throw new ListingPageError(`it names an upload of ${JSON.stringify(outside.Key ?? "")}, outside the prefix ${JSON.stringify(prefix)} that was listed`);
  return {
    uploads: (out.Uploads ?? []).map((u) => ({ key: u.Key ?? "", uploadId: u.UploadId ?? "", initiated: u.Initiated })),
    next: out.IsTruncated ? { key: out.NextKeyMarker, uploadId: out.NextUploadIdMarker } : undefined,
  };
}
