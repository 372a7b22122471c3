import { codedError } from "../failures.js";

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
      if (this.line.length > 4096) throw codedError("UND_ERR_SOCKET", "malformed chunked body");
      if (nl < 0) return false;
      i = nl + 1;
      const line = this.line.replace(/\r$/, "");
      this.line = "";
      if (this.state === "data-crlf") {
        if (line !== "") throw codedError("UND_ERR_SOCKET", "malformed chunked body");
        this.state = "size";
      } else if (this.state === "size") {
        const size = parseInt(line.split(";")[0].trim(), 16);
        if (!Number.isSafeInteger(size) || size < 0) throw codedError("UND_ERR_SOCKET", "malformed chunk size");
        if (size === 0) this.state = "trailer";
        else {
          this.left = size;
          this.state = "data";
        }
      } else if (line === "") {
        if (i !== bytes.length) throw codedError("UND_ERR_SOCKET", "bytes after the end of a chunked body");
        return true; // end of trailers
      }
    }
    return false;
  }
}
