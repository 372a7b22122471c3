import { codedError } from "../failures.js";

/** The end of a response's header block. */
const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");

/** A response's status line and headers (names lower-cased, repeats joined with ", "). */
export interface ParsedHead {
  status: number;
  reason: string;
  headers: Record<string, string>;
  http10: boolean;
}

/*
 * The grammar is held to llhttp's strict mode (the parser under Node's http
 * and undici); test/unit/net/http1-llhttp-cases.test.ts feeds this client
 * llhttp's own response cases. Where a rule below refuses what a lax parser
 * would let through, the comment names the llhttp case (test/<file>.md).
 */

/** RFC 9110 token characters: a header name is made of these only (request/invalid.md "Invalid header token #1..#3"). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** HTAB, SP, VCHAR and obs-text: what llhttp's HEADER_CHARS allows in a value (request/lenient-headers.md "Header value": \f is refused). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function malformed(message: string): Error {
  return codedError("UND_ERR_SOCKET", message);
}

/**
 * One header (or trailer) line, CRLF already cut off: its lower-cased name and
 * its value without surrounding whitespace. Throws on anything llhttp refuses.
 */
export function headerLine(line: string): [string, string] {
  // obs-fold, or a header block that starts with whitespace (response/invalid.md
  // "Invalid space after start line", request/invalid.md "Spaces before headers").
  if (line[0] === " " || line[0] === "\t") throw malformed(`folded header line (obs-fold) in response: ${JSON.stringify(line.slice(0, 80))}`);
  const colon = line.indexOf(":");
  const name = colon < 0 ? line : line.slice(0, colon);
  // No colon, an empty name, or whitespace before the colon (request/content-length.md
  // "Invalid whitespace token with `Content-Length` header field", response/sample.md "Spaces in header name").
  if (colon < 0 || !HEADER_NAME.test(name)) throw malformed(`malformed header name in response: ${JSON.stringify(line.slice(0, 80))}`);
  const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
  if (!HEADER_VALUE.test(value)) throw malformed(`invalid character in response header ${name}`);
  return [name.toLowerCase(), value];
}

/**
 * Drops the CR and LF bytes at the start of the first `n` bytes of `bytes`,
 * moving the rest to the front, and returns how many are left: empty lines
 * before a status line are skipped, as llhttp does (response/sample.md
 * "Response starting with CRLF", response/connection.md "HTTP 100 first, then 400").
 */
export function dropEmptyLines(bytes: Buffer, n: number): number {
  let skip = 0;
  while (skip < n && (bytes[skip] === 13 || bytes[skip] === 10)) skip++;
  if (skip > 0 && skip < n) bytes.copyWithin(0, skip, n);
  return n - skip;
}

/**
 * Where the head gathered so far in `bytes` ends (the offset of its CRLFCRLF),
 * or -1; `from` is where the newest read began. A line ended by a bare LF fails
 * at once, not at the close or a timeout: that head would never end
 * (response/invalid.md "Only LFs present").
 */
export function headEnd(bytes: Buffer, from: number): number {
  const end = bytes.indexOf(CRLFCRLF, Math.max(0, from - 3));
  const head = end < 0 ? bytes : bytes.subarray(0, end + 4);
  for (let lf = head.indexOf(10, from); lf >= 0; lf = head.indexOf(10, lf + 1)) {
    if (head[lf - 1] !== 13) throw malformed("bare CR or LF in response head");
  }
  return end;
}

export function parseHead(text: string): ParsedHead {
  const lines = text.split("\r\n");
  // A CR or LF left inside a line was not part of a CRLF (response/invalid.md
  // "Headers separated by CR", "Bare CR after response line"; request/invalid.md "Missing CR between headers").
  if (lines.some((line) => /[\r\n]/.test(line))) throw malformed("bare CR or LF in response head");
  // HTTP/1.0 and 1.1 only (llhttp also takes 0.9 and 2.0, and RTSP/ICE: no S3 server sends those), one SP, three digits.
  const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]);
  if (!statusLine) throw malformed(`malformed HTTP status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
  // llhttp stops at a 101 and hands the connection over (response/connection.md
  // "HTTP 101 response with Upgrade ..."): s3x never asks to switch protocols.
  if (statusLine[2] === "101") throw malformed("the server switched protocols (101), which s3x never asks for");
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const [name, value] = headerLine(lines[i]);
    // Any second Content-Length, even an equal one (request/content-length.md
    // "Error on duplicate `Content-Length`"; http.ts header_value_content_length_once).
    if (name === "content-length" && name in headers) throw malformed("duplicate Content-Length in response");
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  // Either framing may be forged to smuggle a second answer: both is an error
  // (request/content-length.md "Error on simultaneous `Content-Length` and `Transfer-Encoding: identity`").
  if (headers["content-length"] !== undefined && headers["transfer-encoding"] !== undefined) {
    throw malformed("response has both Content-Length and Transfer-Encoding");
  }
  // Checked whatever the status, as llhttp does: digits only, not empty, no sign,
  // no hex or exponent (request/content-length.md "Empty `Content-Length`",
  // "Spaces in `Content-Length` #2", "Error on `Content-Length` overflow").
  const cl = headers["content-length"];
  if (cl !== undefined && !(/^\d+$/.test(cl) && Number.isSafeInteger(Number(cl)))) throw malformed(`malformed Content-Length: ${cl.slice(0, 80)}`);
  return { status: Number(statusLine[2]), reason: statusLine[3] ?? "", headers, http10: statusLine[1] === "0" };
}

/** How a response body is delimited: by Content-Length, by chunks, or by the server closing the connection. */
export type Framing = "length" | "chunked" | "close";

/** The body framing a head announces, its length (when known), and whether the connection stays open after it. */
export function framingOf(head: ParsedHead, headOnly: boolean): { framing: Framing; length: number; keepAlive: boolean } {
  const headers = head.headers;
  const te = headers["transfer-encoding"];
  const cl = headers["content-length"];
  let framing: Framing = "close";
  let length = Number.POSITIVE_INFINITY;
  if (headOnly || head.status === 204 || head.status === 304) {
    // These answers describe a body they do not carry (response/connection.md "HTTP 304 with Content-Length").
    framing = "length";
    length = 0;
  } else if (te !== undefined) {
    // Exactly `chunked`. llhttp reads a body under any other coding until the
    // close and hands over the coded bytes (response/transfer-encoding.md
    // "`chunkedchunked` ...", "`chunked` before other transfer-encoding"): s3x
    // never offers a coding (no TE header), cannot undo one, and would store
    // the coded bytes as the object's, so it refuses them.
    if (te.trim().toLowerCase() !== "chunked") throw malformed(`unsupported Transfer-Encoding in response: ${te.slice(0, 80)}`);
    framing = "chunked";
  } else if (cl !== undefined) {
    framing = "length";
    length = Number(cl); // its form was checked by parseHead
  }
  const connection = (headers.connection ?? "").toLowerCase();
  const keepAlive = framing !== "close" && (head.http10 ? connection.includes("keep-alive") : !connection.includes("close"));
  return { framing, length, keepAlive };
}

/**
 * The head among the first `filled` bytes of `scratch`, the last `added` of
 * them just read: undefined while it is incomplete. Throws on a malformed
 * head, or one that fills `scratch` and is still not over.
 */
export function headIn(scratch: Buffer, filled: number, added: number): { head: ParsedHead; end: number } | undefined {
  const end = headEnd(scratch.subarray(0, filled), filled - added);
  if (end >= 0) return { head: parseHead(scratch.toString("latin1", 0, end)), end };
  if (filled >= scratch.length) throw codedError("UND_ERR_HEADERS_OVERFLOW", `response headers too large (over ${scratch.length / 1024} KiB)`);
  return undefined;
}
