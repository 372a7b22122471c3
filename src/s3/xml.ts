import { XMLParser } from "fast-xml-parser";
import { xmlText } from "./errors.js";

/**
 * S3's XML answers, read by fast-xml-parser (the library the AWS SDK itself
 * used): a document becomes plain objects, an element's text a string
 * (never a number: ETags and keys stay as sent, whitespace included), and the
 * elements S3 repeats are always arrays, even when one came. Listings of
 * objects have a faster reader of their own (s3/list-xml.ts) that hands
 * anything unusual back to this one.
 */

/** Elements that may repeat in S3's answers. */
const REPEATED = new Set(["Contents", "CommonPrefixes", "Part", "Upload", "Bucket", "Deleted", "Error"]);

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  // Entities are decoded by childText (s3/errors.ts xmlText): XML's five and every numeric
  // character reference, as the SDK decodes them (S3 writes control characters in keys as &#x1;).
  processEntities: false,
  htmlEntities: false,
  // A repeated element inside the root (a root-level <Error> document is one element).
  isArray: (name, path) => REPEATED.has(name) && typeof path === "string" && path.includes("."),
});

/** An element: its children by name (repeated ones as arrays) or its text. */
export type XmlNode = { [name: string]: XmlValue };
export type XmlValue = string | XmlNode | XmlValue[];

/** The document's root element named `root`, or undefined when the text is not such a document. */
export function xmlRoot(text: string, root: string): XmlNode | undefined {
  let doc: XmlNode;
  try {
    doc = parser.parse(text) as XmlNode;
  } catch {
    return undefined;
  }
  const node = doc[root];
  if (node === "") return {};
  return isNode(node) ? node : undefined;
}

function isNode(value: XmlValue | undefined): value is XmlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The text of child `name`, or undefined when absent. */
export function childText(node: XmlNode | undefined, name: string): string | undefined {
  const value = node?.[name];
  if (typeof value === "string") return xmlText(value);
  if (Array.isArray(value) && typeof value[0] === "string") return xmlText(value[0]);
  return undefined;
}

/** A child's text as a number (undefined when absent or not a number). */
export function childNumber(node: XmlNode | undefined, name: string): number | undefined {
  const text = childText(node, name);
  if (text === undefined || text.trim() === "") return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** A child's text as a boolean ("true"/"false"), else undefined. */
export function childBoolean(node: XmlNode | undefined, name: string): boolean | undefined {
  const text = childText(node, name)?.trim();
  return text === "true" ? true : text === "false" ? false : undefined;
}

/** The child elements named `name` (none: an empty list). */
export function children(node: XmlNode | undefined, name: string): XmlNode[] {
  const value = node?.[name];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.map((item) => (isNode(item) ? item : {}));
}

/** Child `name` as an element. */
export function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  const value = node?.[name];
  if (isNode(value)) return value;
  if (value === "") return {};
  return undefined;
}

/** Text escaped for an XML element or attribute. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"'\r\n\t]/g, (c) => XML_ESCAPES[c]);
}

// Carriage returns and tabs as references, so a key that holds them survives the parser at the other end.
const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;" };
