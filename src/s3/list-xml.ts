import { childBoolean, childNumber, childText, children, xmlRoot } from "./xml.js";

/**
 * ListObjectsV2 answers read by a small XML reader of s3x's own.
 *
 * Through a generic XML parser and a schema walk (the AWS SDK's way), a page
 * of 1,000 keys cost 12 ms of CPU, and 5 ms with this reader, request
 * building and signing included (npm run bench:list-xml); for a listing or a
 * no-op sync that is most of the client's work (end to end, `ls -r` of
 * 10,000 keys: 0.38 CPU-s against 0.94 with the SDK's parser, 7 interleaved
 * pairs, bench/ab.ts). An S3 listing is a flat, regular document
 * (`<Contents>` blocks of a few text elements), so s3x reads the fields it
 * uses straight out of the text. Any answer this reader does not recognise
 * goes to the library (fast-xml-parser, s3/xml.ts).
 */
export function readListing(xml: string): ListObjectsV2Fields | undefined {
  return parseListObjectsV2(xml) ?? listingThroughLibrary(xml);
}

/** The same fields, read by the library: for documents the reader above does not take. */
export function listingThroughLibrary(xml: string): ListObjectsV2Fields | undefined {
  const result = xmlRoot(xml, "ListBucketResult");
  const truncated = childBoolean(result, "IsTruncated");
  if (!result || truncated === undefined) return undefined;
  const contents = children(result, "Contents").map((c) => {
    const lastModified = childText(c, "LastModified");
    return { Key: childText(c, "Key") as string, LastModified: lastModified === undefined ? undefined : new Date(lastModified), ETag: childText(c, "ETag"), Size: childNumber(c, "Size"), StorageClass: childText(c, "StorageClass") };
  });
  const prefixes = children(result, "CommonPrefixes").map((p) => ({ Prefix: childText(p, "Prefix") as string }));
  const output: ListObjectsV2Fields = {
    IsTruncated: truncated,
    Name: childText(result, "Name"),
    Prefix: childText(result, "Prefix"),
    Delimiter: childText(result, "Delimiter"),
    KeyCount: childNumber(result, "KeyCount"),
    MaxKeys: childNumber(result, "MaxKeys"),
    ContinuationToken: childText(result, "ContinuationToken"),
    NextContinuationToken: childText(result, "NextContinuationToken"),
    StartAfter: childText(result, "StartAfter"),
  };
  if (contents.length > 0) output.Contents = contents;
  if (prefixes.length > 0) output.CommonPrefixes = prefixes;
  for (const name of Object.keys(output) as (keyof ListObjectsV2Fields)[]) if (output[name] === undefined) delete output[name];
  return output;
}

/** The fields of ListObjectsV2's output that this reader fills (the SDK's names and types). */
export interface ListObjectsV2Fields {
  Name?: string;
  Prefix?: string;
  Delimiter?: string;
  KeyCount?: number;
  MaxKeys?: number;
  IsTruncated: boolean;
  ContinuationToken?: string;
  NextContinuationToken?: string;
  StartAfter?: string;
  Contents?: { Key: string; LastModified?: Date; ETag?: string; Size?: number; StorageClass?: string }[];
  CommonPrefixes?: { Prefix: string }[];
}

/**
 * Reads a ListBucketResult document; undefined when it is not one this
 * reader understands, or when its KeyCount disagrees with the keys and
 * prefixes read (then the library reads it: readListing). Top-level fields
 * are read outside the `<Contents>` and `<CommonPrefixes>` blocks, which
 * have a `<Prefix>` of their own.
 */
export function parseListObjectsV2(xml: string): ListObjectsV2Fields | undefined {
  const root = xml.indexOf("<ListBucketResult");
  const end = xml.lastIndexOf("</ListBucketResult>");
  if (root < 0 || end < root) return undefined;
  // Anything but plain tags and the five entities (attributes, whitespace in
  // a tag, CDATA, comments, other entities, CR line ends): the library
  // reads it. A `<Contents xmlns="">` read as text would lose every key.
  const body = xml.slice(xml.indexOf(">", root) + 1, end);
  if (NOT_A_PLAIN_TAG.test(body) || UNKNOWN_ENTITY.test(body) || body.includes("\r")) return undefined;
  const contents: NonNullable<ListObjectsV2Fields["Contents"]> = [];
  const prefixes: NonNullable<ListObjectsV2Fields["CommonPrefixes"]> = [];
  let topLevel = "";
  let at = xml.indexOf(">", root) + 1;
  // Where the next block of each kind starts (-1: none left); searched again
  // only once passed, so a page without prefixes is not rescanned per key.
  let contentsAt = xml.indexOf("<Contents>", at);
  let prefixesAt = xml.indexOf("<CommonPrefixes>", at);
  while (at < end) {
    if (contentsAt >= 0 && contentsAt < at) contentsAt = xml.indexOf("<Contents>", at);
    if (prefixesAt >= 0 && prefixesAt < at) prefixesAt = xml.indexOf("<CommonPrefixes>", at);
    const next = nearest(contentsAt, prefixesAt, end);
    topLevel += xml.slice(at, next);
    if (next === end) break;
    if (next === contentsAt) {
      const close = xml.indexOf("</Contents>", next);
      if (close < 0) return undefined;
      const block = xml.slice(next + "<Contents>".length, close);
      const key = text(block, KEY);
      if (key === undefined) return undefined;
      const size = text(block, SIZE);
      const lastModified = text(block, LAST_MODIFIED);
      contents.push({
        Key: key,
        LastModified: lastModified === undefined ? undefined : new Date(lastModified),
        ETag: text(block, ETAG),
        Size: size === undefined ? undefined : Number(size),
        StorageClass: text(block, STORAGE_CLASS),
      });
      at = close + "</Contents>".length;
    } else {
      const close = xml.indexOf("</CommonPrefixes>", next);
      if (close < 0) return undefined;
      const prefix = text(xml.slice(next + "<CommonPrefixes>".length, close), PREFIX);
      if (prefix === undefined) return undefined;
      prefixes.push({ Prefix: prefix });
      at = close + "</CommonPrefixes>".length;
    }
  }
  const truncated = text(topLevel, tag("IsTruncated"));
  if (truncated !== "true" && truncated !== "false") return undefined;
  const number = (name: string): number | undefined => {
    const value = text(topLevel, tag(name));
    return value === undefined ? undefined : Number(value);
  };
  const output: ListObjectsV2Fields = {
    IsTruncated: truncated === "true",
    Name: text(topLevel, tag("Name")),
    Prefix: text(topLevel, tag("Prefix")),
    Delimiter: text(topLevel, tag("Delimiter")),
    KeyCount: number("KeyCount"),
    MaxKeys: number("MaxKeys"),
    ContinuationToken: text(topLevel, tag("ContinuationToken")),
    NextContinuationToken: text(topLevel, tag("NextContinuationToken")),
    StartAfter: text(topLevel, tag("StartAfter")),
  };
  // A count that disagrees with what was read: the library reads it (and s3/list.ts checks again).
  if (output.KeyCount !== undefined && output.KeyCount !== contents.length + prefixes.length) return undefined;
  if (contents.length > 0) output.Contents = contents;
  if (prefixes.length > 0) output.CommonPrefixes = prefixes;
  for (const name of Object.keys(output) as (keyof ListObjectsV2Fields)[]) if (output[name] === undefined) delete output[name];
  return output;
}

/** A `<` that does not open `<Name>`, `</Name>` or `<Name/>`. */
const NOT_A_PLAIN_TAG = /<(?!\/?[A-Za-z][A-Za-z0-9]*\/?>)/;
/** An `&` that does not start one of the entities decodeEntities knows. */
const UNKNOWN_ENTITY = /&(?!(?:amp|lt|gt|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});)/;

function nearest(a: number, b: number, end: number): number {
  return Math.min(a < 0 ? end : a, b < 0 ? end : b, end);
}

/** An element's three spellings, built once: the reader looks for them ~5 times per key. */
interface Tag {
  open: string;
  close: string;
  empty: string;
}

function tag(name: string): Tag {
  return { open: `<${name}>`, close: `</${name}>`, empty: `<${name}/>` };
}

const KEY = tag("Key");
const SIZE = tag("Size");
const LAST_MODIFIED = tag("LastModified");
const ETAG = tag("ETag");
const STORAGE_CLASS = tag("StorageClass");
const PREFIX = tag("Prefix");

/** The text of the first `<name>…</name>` (or "" for `<name/>`) in `xml`, entities decoded. */
function text(xml: string, element: Tag): string | undefined {
  const open = xml.indexOf(element.open);
  if (open < 0) return xml.includes(element.empty) ? "" : undefined;
  const start = open + element.open.length;
  const close = xml.indexOf(element.close, start);
  if (close < 0) return undefined;
  const raw = xml.slice(start, close);
  return raw.includes("&") ? decodeEntities(raw) : raw;
}

const NAMED_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const QUOT = "&quot;";

function decodeEntities(raw: string): string {
  // Every ETag is `&quot;…&quot;`: spare those the regular expression.
  if (raw.startsWith(QUOT) && raw.indexOf("&", QUOT.length) === raw.length - QUOT.length && raw.endsWith(QUOT)) {
    return `"${raw.slice(QUOT.length, -QUOT.length)}"`;
  }
  return raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, entity: string) => {
    if (entity[0] !== "#") return NAMED_ENTITIES[entity];
    return String.fromCodePoint(entity[1] === "x" ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10));
  });
}
