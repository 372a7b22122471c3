import { codedError } from "../failures.js";
import { headerLine } from "./response-head.js";

/**
 * A chunk-size line as llhttp's strict mode takes it: hex digits, then
 * `;name` or `;name=value` extensions, value a token or a quoted string; no
 * whitespace anywhere (response/transfer-encoding.md "Chunk extensions",
 * "Chunk extensions quoting"; refused: "Trailing space on chunked body",
 * "No semicolon before chunk extensions", "No extension after semicolon",
 * "Unbalanced chunk extensions quoting").
 */
const CHUNK_SIZE_LINE =
  /^([0-9A-Fa-f]+)(?:;[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:=(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+|"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"))?)*$/;

function malformed(message: string): Error {
  return codedError("UND_ERR_SOCKET", message);
}

/** Undoes Transfer-Encoding: chunked across reads. */
export class ChunkDecoder {
  private state: "size" | "data" | "data-crlf" | "trailer" = "size";
  private line = "";
  private left = 0;

  /** Feeds bytes; `emit` gets the data (views valid only during the call). Returns true at the end of the body. */
  feed(bytes: Buffer, emit: (piece: Buffer) => void): boolean {
    let i = 0;
    while (i < bytes.length) {
      if (this.state === "data") {
        const take = Math.min(this.left, bytes.length - i);
        emit(bytes.subarray(i, i + take));
        i += take;
        this.left -= take;
        if (this.left === 0) this.state = "data-crlf";
        continue;
      }
      const nl = bytes.indexOf(10, i);
      const upto = nl < 0 ? bytes.length : nl;
      this.line += bytes.toString("latin1", i, upto);
      if (this.line.length > 4096) throw malformed("malformed chunked body: a line of over 4 KiB");
      if (nl < 0) return false;
      i = nl + 1;
      // Every line ends in CRLF, a bare LF is refused (request/transfer-encoding.md
      // "Chunk header not terminated by CRLF"; a CR inside fails the grammar below).
      if (!this.line.endsWith("\r")) throw malformed("malformed chunked body: bare LF");
      const line = this.line.slice(0, -1);
      this.line = "";
      if (this.state === "data-crlf") {
        // request/transfer-encoding.md "Chunk data not terminated by CRLF".
        if (line !== "") throw malformed("malformed chunked body: chunk data not followed by CRLF");
        this.state = "size";
      } else if (this.state === "size") {
        const match = CHUNK_SIZE_LINE.exec(line);
        if (!match) throw malformed(/^[0-9A-Fa-f]+;/.test(line) ? "malformed chunk extension" : "malformed chunk size");
        const size = parseInt(match[1], 16);
        // llhttp refuses past 64 bits ("Chunk size overflow"), s3x past 2^53: far beyond any S3 object.
        if (!Number.isSafeInteger(size)) throw malformed("chunk size overflow");
        if (size === 0) this.state = "trailer";
        else {
          this.left = size;
          this.state = "data";
        }
      } else if (line === "") {
        if (i !== bytes.length) throw malformed("bytes after the end of a chunked body");
        return true; // end of trailers
      } else {
        headerLine(line); // a trailer is held to the header grammar, and dropped
      }
    }
    return false;
  }
}
