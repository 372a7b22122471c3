import type { S3Client } from "@aws-sdk/client-s3";
import { readAll } from "./body.js";

/**
 * ListObjectsV2 answers read by a small XML reader of s3x's own.
 *
 * The SDK parses every answer into a generic tree and then walks it against
 * the operation's schema: a page of 1,000 keys costs 12 ms of CPU through
 * the SDK and 5 ms with this reader, request building and signing included
 * (npm run bench:list-xml), for a listing or a no-op sync most of the client's work
 * (end to end, `ls -r` of 10,000 keys: 0.38 CPU-s against 0.94 with the
 * SDK's parser, 7 interleaved pairs, bench/ab.ts). An S3 listing is a flat, regular document
 * (`<Contents>` blocks of a few text elements), so s3x reads the fields it
 * uses straight out of the text. The SDK still builds, signs and sends the
 * request and still parses everything else: errors (any status but 200),
 * and any answer this reader does not recognise, go to its own parser.
 */
export function readListingsDirectly(client: S3Client): void {
  const protocol = (client.config as unknown as { protocol?: { deserializeResponse?: DeserializeResponse } }).protocol;
  const original = protocol?.deserializeResponse;
  if (!protocol || typeof original !== "function") return;
  const sdkParse = original.bind(protocol);
  protocol.deserializeResponse = async (operation, context, response) => {
    if (operation?.name !== "ListObjectsV2" || response.statusCode !== 200 || response.body === undefined) return sdkParse(operation, context, response);
    const bytes = await readAll(response.body);
    const output = parseListObjectsV2(bytes.toString("utf8"));
    if (!output) {
      // Not the document we know: the SDK's parser decides (errors included).
      response.body = bytes;
      return sdkParse(operation, context, response);
    }
    return { ...output, $metadata: { httpStatusCode: 200, requestId: header(response.headers, "x-amz-request-id"), attempts: 1, totalRetryDelay: 0 } };
  };
}

type DeserializeResponse = (operation: { name?: string } | undefined, context: unknown, response: RawResponse) => Promise<unknown>;

interface RawResponse {
  statusCode: number;
  headers: Record<string, string | undefined>;
  body?: unknown;
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
 * prefixes read (then the SDK's parser takes over). Top-level fields
 * are read outside the `<Contents>` and `<CommonPrefixes>` blocks, which
 * have a `<Prefix>` of their own.
 */
export function parseListObjectsV2(xml: string): ListObjectsV2Fields | undefined {
  const root = xml.indexOf("<ListBucketResult");
  const end = xml.lastIndexOf("</ListBucketResult>");
  if (root < 0 || end < root) return undefined;
  // Anything but plain tags and the five entities (attributes, whitespace in
  // a tag, CDATA, comments, other entities, CR line ends): the SDK's parser
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
  // A count that disagrees with what was read: the SDK's parser reads it (and s3/list.ts checks again).
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

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}
