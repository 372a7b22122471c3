import { codedError } from "../failures.js";

/** The end of a response's header block. */
export const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");

/** A response's status line and headers (names lower-cased, repeats joined with ", "). */
export interface ParsedHead {
  status: number;
  reason: string;
  headers: Record<string, string>;
  http10: boolean;
}

export function parseHead(text: string): ParsedHead {
  const lines = text.split("\r\n");
  const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]);
  if (!statusLine) throw codedError("UND_ERR_SOCKET", `malformed HTTP status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { status: Number(statusLine[2]), reason: statusLine[3] ?? "", headers, http10: statusLine[1] === "0" };
}

/** How a response body is delimited: by Content-Length, by chunks, or by the server closing the connection. */
export type Framing = "length" | "chunked" | "close";

/** The body framing a head announces, its length (when known), and whether the connection stays open after it. */
export function framingOf(head: ParsedHead, headOnly: boolean): { framing: Framing; length: number; keepAlive: boolean } {
  const headers = head.headers;
  const te = headers["transfer-encoding"];
  let framing: Framing = "close";
  let length = Number.POSITIVE_INFINITY;
  if (headOnly || head.status === 204 || head.status === 304) {
    // These answers describe a body they do not carry.
    framing = "length";
    length = 0;
  } else if (te !== undefined && /chunked/i.test(te)) {
    framing = "chunked";
  } else if (headers["content-length"] !== undefined) {
    framing = "length";
    length = Number(headers["content-length"]);
    if (!Number.isSafeInteger(length) || length < 0) throw codedError("UND_ERR_SOCKET", `malformed Content-Length: ${headers["content-length"]}`);
  }
  const connection = (headers.connection ?? "").toLowerCase();
  const keepAlive = framing !== "close" && (head.http10 ? connection.includes("keep-alive") : !connection.includes("close"));
  return { framing, length, keepAlive };
}
