import { textOf, type Call, type S3Requester } from "./request.js";
import { readListing } from "./list-xml.js";
import { child, childBoolean, childText, children, xmlRoot } from "./xml.js";

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
  s3: S3Requester,
  bucket: string,
  prefix: string,
  options: { delimiter?: string; token?: string; startAfter?: string; maxKeys?: number } & Call,
): Promise<ListPage & { nextToken?: string }> {
  const query: Record<string, string> = { "list-type": "2" };
  if (prefix) query.prefix = prefix;
  if (options.delimiter !== undefined) query.delimiter = options.delimiter;
  if (options.token !== undefined) query["continuation-token"] = options.token;
  if (options.startAfter !== undefined) query["start-after"] = options.startAfter;
  if (options.maxKeys !== undefined) query["max-keys"] = String(options.maxKeys);
  const response = await s3.send({ operation: "ListObjectsV2", method: "GET", bucket, query }, options);
  const out = readListing(await textOf(response));
  if (!out) throw new ListingPageError("the answer is not a ListBucketResult");
  checkListingPage(out, prefix);
  return {
    objects: (out.Contents ?? []).map((o) => ({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0), etag: o.ETag ?? "" })),
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

export async function listBuckets(s3: S3Requester, call: Call = {}): Promise<{ name: string; created?: Date }[]> {
  const response = await s3.send({ operation: "ListBuckets", method: "GET" }, call);
  const result = xmlRoot(await textOf(response), "ListAllMyBucketsResult");
  if (!result) throw new Error("ListBuckets answered with a document that is not a ListAllMyBucketsResult");
  return children(child(result, "Buckets"), "Bucket").map((b) => {
    const created = childText(b, "CreationDate");
    return { name: childText(b, "Name") ?? "", created: created === undefined ? undefined : new Date(created) };
  });
}

export interface InProgressUpload {
  key: string;
  uploadId: string;
  initiated?: Date;
}

/** One page of ListMultipartUploads. */
export async function listUploadsPage(
  s3: S3Requester,
  bucket: string,
  prefix: string,
  marker: { key?: string; uploadId?: string },
  call: Call = {},
): Promise<{ uploads: InProgressUpload[]; next?: { key?: string; uploadId?: string } }> {
  const query: Record<string, string> = { uploads: "" };
  if (prefix) query.prefix = prefix;
  if (marker.key !== undefined) query["key-marker"] = marker.key;
  if (marker.uploadId !== undefined) query["upload-id-marker"] = marker.uploadId;
  const response = await s3.send({ operation: "ListMultipartUploads", method: "GET", bucket, query }, call);
  const result = xmlRoot(await textOf(response), "ListMultipartUploadsResult");
  if (!result) throw new ListingPageError("the answer is not a ListMultipartUploadsResult");
  const uploads = children(result, "Upload").map((u) => {
    const initiated = childText(u, "Initiated");
    return { key: childText(u, "Key") ?? "", uploadId: childText(u, "UploadId") ?? "", initiated: initiated === undefined ? undefined : new Date(initiated) };
  });
  // rm --uploads aborts what is listed: an upload of a key outside the prefix is not its to abort.
  const outside = uploads.find((u) => !u.key.startsWith(prefix));
  if (outside) throw new ListingPageError(`it names an upload of ${JSON.stringify(outside.key)}, outside the prefix ${JSON.stringify(prefix)} that was listed`);
  return {
    uploads,
    next: childBoolean(result, "IsTruncated") ? { key: childText(result, "NextKeyMarker"), uploadId: childText(result, "NextUploadIdMarker") } : undefined,
  };
}
