/**
 * Test vectors for s3x's HTTP/1.1 client (test/unit/net/http1-llhttp-cases.test.ts):
 * the response cases of llhttp's test suite (https://github.com/nodejs/llhttp,
 * test/<file>.md, named by `source` and `title`) with llhttp's strict-mode
 * verdict, the bytes as those files spell them (their http blocks: lines end
 * in CRLF, \r \n \t \f \xNN and octal escapes undone, non-ASCII as UTF-8).
 *
 * llhttp parses headers and chunked bodies the same way in requests and
 * responses, and its response files hold few header cases: REQUEST_CASES
 * below put a request case's header lines and body under a response status
 * line (the head ended with an empty line where the request's was cut short).
 * S3X_CASES are s3x's own, each saying which llhttp rule it follows.
 */

/** Body bytes to expect: everything after the head, to the close. */
export const TO_CLOSE = Symbol("the bytes after the head");

export type Expect =
  | { kind: "accept"; status: number; body: string | typeof TO_CLOSE; headers?: Record<string, string> }
  /** Refused, at the head or in the body, with an error matching `error`; when `status` is given, the head was taken and the body failed. */
  | { kind: "refuse"; error: RegExp; status?: number };

export interface LlhttpCase {
  title: string;
  /** The llhttp test file (under test/) the case comes from, or "s3x" with the llhttp rule it follows. */
  source: string;
  /** The response's bytes, one char per byte. */
  raw: string;
  expect: Expect;
  /** The server closes the connection after the bytes (else it keeps it open: a refusal must not come from a close). */
  close?: boolean;
  method?: "GET" | "HEAD";
  /** Whether the connection serves a second request (checked only when given). */
  reuse?: boolean;
  /** Why the verdict reads as it does. */
  note?: string;
  /** Where and why s3x deliberately differs from llhttp's verdict. */
  differs?: string;
}

export const accept = (status: number, body: string | typeof TO_CLOSE = "", headers?: Record<string, string>): Expect => ({ kind: "accept", status, body, headers });
export const refuse = (error: RegExp): Expect => ({ kind: "refuse", error });
export const refuseBody = (status: number, error: RegExp): Expect => ({ kind: "refuse", error, status });

// What s3x says for each kind of refusal.
export const STATUS = /malformed HTTP status line/;
export const BARE = /bare CR or LF in response head/;
export const FOLD = /folded header line \(obs-fold\)/;
export const NAME = /malformed header name/;
export const VALUE = /invalid character in response header/;
export const DUP_CL = /duplicate Content-Length/;
export const BOTH = /both Content-Length and Transfer-Encoding/;
export const CL = /malformed Content-Length/;
export const TE = /unsupported Transfer-Encoding/;
export const SIZE = /malformed chunk size/;
export const EXT = /malformed chunk extension/;
export const CHUNK = /malformed chunked body/;
export const CLOSED = /other side closed/;
export const LONGER = /longer than its Content-Length/;
export const SWITCH = /switched protocols/;
export const TOO_LARGE = /response headers too large/;

export const NOT_HTTP = "llhttp also takes RTSP, ICE, HTTP/0.9 and HTTP/2.0 status lines; s3x speaks HTTP/1.x to S3 only";
export const TE_DIFF =
  "llhttp hands over a body under another transfer coding as it came (to the close, or de-chunked); s3x offers none (it sends no TE), cannot undo one, and would store coded bytes as the object's";
export const SWITCH_DIFF = "llhttp stops there and hands the connection over (Pause on CONNECT/Upgrade); s3x never asks to switch protocols";

/** llhttp's request cases, their header lines and body under a response status line. */
export const REQUEST_CASES: LlhttpCase[] = [
  {
    title: "`Content-Length` with zeroes", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 003\r\n\r\nabc",
    expect: accept(200, "abc"),
  },
  {
    title: "Error on `Content-Length` overflow", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000000000\r\n\r\n",
    expect: refuse(CL),
  },
  {
    title: "Error on duplicate `Content-Length`", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    expect: refuse(DUP_CL),
  },
  {
    title: "Error on simultaneous `Content-Length` and `Transfer-Encoding: identity`", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: identity\r\n\r\n",
    expect: refuse(BOTH),
  },
  {
    title: "Invalid whitespace token with `Content-Length` header field", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nContent-Length : 4\r\nUpgrade: ws\r\n\r\nabcdefgh",
    expect: refuse(NAME),
  },
  {
    title: "Funky `Content-Length` with body", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nconTENT-Length: 5\r\n\r\nHELLO",
    expect: accept(200, "HELLO"),
  },
  {
    title: "Spaces in `Content-Length` #2", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 4 2\r\n\r\n",
    expect: refuse(CL),
  },
  {
    title: "Spaces in `Content-Length` #3", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 13 37\r\n\r\n",
    expect: refuse(CL),
  },
  {
    title: "Empty `Content-Length`", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
    expect: refuse(CL),
  },
  {
    title: "`Content-Length` with CR instead of dash", source: "request/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent\rLength: 003\r\n\r\nabc",
    expect: refuse(BARE),
  },
  {
    title: "Parse chunks with lowercase size", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n",
    expect: accept(200, "0123456789"),
  },
  {
    title: "Parse chunks with uppercase size", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
    expect: accept(200, "0123456789"),
  },
  {
    title: "Two chunks and triple zero prefixed end chunk", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n000\r\n\r\n",
    expect: accept(200, "hello world"),
  },
  {
    title: "Trailing headers", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nVary: *\r\nContent-Type: text/plain\r\n\r\n",
    expect: accept(200, "hello world"),
  },
  {
    title: "Chunk extensions quoting", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ilovew3=\"I \\\"love\\\"; \\\\extensions\\\\\";somuchlove=\"aretheseparametersfor\";blah;foo=bar\r\nhello\r\n6;blahblah;blah\r\n world\r\n0\r\n",
    expect: refuseBody(200, CLOSED), close: true,
    note: "quoted-pairs in an extension are taken; the input stops before the body's last CRLF",
  },
  {
    title: "POST with `Transfer-Encoding` and `Content-Length`", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nAccept: */*\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nWorld",
    expect: refuse(BOTH),
  },
  {
    title: "POST with `chunked` as last transfer-encoding", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nAccept: */*\r\nTransfer-Encoding: deflate, chunked\r\n\r\n5\r\nWorld\r\n0\r\n\r\n",
    expect: refuse(TE),
    differs: TE_DIFF,
  },
  {
    title: "Missing last-chunk", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nfoo\r\n\r\n",
    expect: refuse(SIZE),
  },
  {
    title: "Validate chunk parameters", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3 \n  \r\nfoo\r\n\r\n",
    expect: refuse(CHUNK),
  },
  {
    title: "Chunk header not terminated by CRLF", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nHost: a\r\nConnection: close \r\nTransfer-Encoding: chunked \r\n\r\n5\r\r;ABCD\r\n34\r\nE\r\n0\r\n\r\nGET / HTTP/1.1 \r\nHost: a\r\nContent-Length: 5\r\n\r\n0\r\n",
    expect: refuse(SIZE),
  },
  {
    title: "Chunk data not terminated by CRLF", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nHost: a\r\nConnection: close \r\nTransfer-Encoding: chunked \r\n\r\n5\r\nABCDE0\r\n",
    expect: refuse(CHUNK),
  },
  {
    title: "Space after chunk header", source: "request/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na \r\n0123456789\r\n0\r\n\r\n",
    expect: refuse(SIZE),
  },
  {
    title: "Headers separated by LF", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost:5000\r\nx:x\nTransfer-Encoding: chunked\r\n\r\n1\r\nA\r\n0\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Headers separated by dummy characters", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nHost: a\r\n\rZGET /evil: HTTP/1.1\r\nHost: a\r\n\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Empty headers separated by CR", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nConnection: Close\r\nHost: localhost:5000\r\nx:\rTransfer-Encoding: chunked\r\n\r\n1\r\nA\r\n0\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Empty headers separated by LF", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost:5000\r\nx:\nTransfer-Encoding: chunked\r\n\r\n1\r\nA\r\n0\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Invalid header token #1", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nFo@: Failure\r\n\r\n",
    expect: refuse(NAME),
  },
  {
    title: "Invalid header token #2", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nFoo\x01\test: Bar\r\n\r\n",
    expect: refuse(NAME),
  },
  {
    title: "Invalid header token #3", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\n: Bar\r\n\r\n",
    expect: refuse(NAME),
  },
  {
    title: "Illegal header field name line folding", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nname\r\n : value\r\n\r\n",
    expect: refuse(NAME),
  },
  {
    title: "Corrupted header name", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nHost: www.example.com\r\nX-Some-Header\r\x1b5\xc3\x95eep-Alive\r\nAccept-Encoding: gzip\r\n\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Missing CR between headers", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost\r\nDummy: x\nContent-Length: 23\r\n\r\nGET / HTTP/1.1\r\nDummy: GET /admin HTTP/1.1\r\nHost: localhost\r\n\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Spaces before headers", source: "request/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost\r\nFoo: bar\r\n Content-Length: 38\r\n\r\nGET /bye HTTP/1.1\r\nHost: localhost\r\n\r\n",
    expect: refuse(FOLD),
  },
  {
    title: "Line folding in header value with CRLF", source: "request/sample.md",
    raw: "HTTP/1.1 200 OK\r\nLine1:   abc\r\n\tdef\r\n ghi\r\n\t\tjkl\r\n  mno \r\n\t \tqrs\r\nLine2: \t line2\t\r\nLine3:\r\n line3\r\nLine4: \r\n \r\nConnection:\r\n close\r\n\r\n",
    expect: refuse(FOLD),
    note: "a lenient-headers case: strict llhttp refuses obs-fold (Unexpected whitespace after header value)",
  },
  {
    title: "Line folding in header value with LF", source: "request/sample.md",
    raw: "HTTP/1.1 200 OK\r\nLine1:   abc\n\tdef\n ghi\n\t\tjkl\n  mno \n\t \tqrs\nLine2: \t line2\t\nLine3:\n line3\nLine4: \n \nConnection:\n close\n\n\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Extended Characters", source: "request/sample.md",
    raw: "HTTP/1.1 200 OK\r\nTest: D\xc3\xbcsseldorf\r\n\r\n",
    expect: accept(200, "", { test: "D\u00c3\u00bcsseldorf" }), close: true,
  },
  {
    title: "255 ASCII in header value", source: "request/sample.md",
    raw: "HTTP/1.1 200 OK\r\nHeader1: Value1\r\nHeader2: \xc3\xbfValue2\r\n\r\n",
    expect: accept(200, ""), close: true,
  },
  {
    title: "Header value", source: "request/lenient-headers.md",
    raw: "HTTP/1.1 200 OK\r\nHeader1: \x0c\r\n\r\n\r\n",
    expect: refuse(VALUE),
  },
  {
    title: "Not treating `\\r` as `-`", source: "request/connection.md",
    raw: "HTTP/1.1 200 OK\r\nConnection: keep\ralive\r\n\r\n",
    expect: refuse(BARE),
  },
];

/** s3x's own cases, each held to an llhttp rule named in `source`. */
export const S3X_CASES: LlhttpCase[] = [
  {
    title: "Chunk size overflow", source: "s3x (llhttp src/llhttp/http.ts: chunk_size past 64 bits is 'Chunk size overflow')",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
    expect: refuse(/chunk size overflow/),
  },
  {
    title: "Duplicate Content-Length of the same value", source: "s3x (llhttp src/llhttp/http.ts: header_value_content_length_once refuses any second one)",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
    expect: refuse(DUP_CL),
  },
  {
    title: "A trailer with an invalid name", source: "s3x (llhttp src/llhttp/http.ts: trailers go through header_field_start)",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nBad Trailer: x\r\n\r\n",
    expect: refuseBody(200, NAME),
  },
  {
    title: "Invalid space after start line, the head ended", source: "s3x (response/invalid.md 'Invalid space after start line', with an end to its head)",
    raw: "HTTP/1.1 200 OK\r\n Host: foo\r\n\r\n",
    expect: refuse(FOLD),
  },
  {
    title: "Chunked body cut short by the close", source: "s3x (llhttp src/native/api.c: llhttp_finish mid-message is 'Invalid EOF state')",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
    expect: refuseBody(200, CLOSED), close: true,
  },
  {
    title: "Content-Length body cut short by the close", source: "s3x (llhttp src/native/api.c: llhttp_finish mid-message is 'Invalid EOF state')",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
    expect: refuseBody(200, CLOSED), close: true,
  },
  {
    title: "Head cut short by the close", source: "s3x (llhttp src/native/api.c: llhttp_finish mid-message is 'Invalid EOF state')",
    raw: "HTTP/1.1 200 OK\r\nContent-Le",
    expect: refuse(CLOSED), close: true,
  },
  {
    title: "A head over s3x's 64 KiB limit", source: "s3x (llhttp has no limit; Node's --max-http-header-size is 16 KiB)",
    raw: `HTTP/1.1 200 OK\r\nx-amz-meta-big: ${"a".repeat(70 * 1024)}\r\nContent-Length: 0\r\n\r\n`,
    expect: refuse(TOO_LARGE),
  },
  {
    title: "A head over Node's 16 KiB default, under s3x's limit", source: "s3x (llhttp has no limit)",
    raw: `HTTP/1.1 200 OK\r\n${"x-amz-meta-m: 0123456789abcdef0123456789abcdef\r\n".repeat(500)}Content-Length: 2\r\n\r\nok`,
    expect: accept(200, "ok"), reuse: true,
    note: "Node's http client refuses this head by default (HPE_HEADER_OVERFLOW); s3x reads heads up to 64 KiB",
  },
  {
    title: "HEAD answered with chunked framing and nothing after", source: "s3x (response/content-length.md 'Content-Length reset when no body is received': skipBody)",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    expect: accept(200, ""), method: "HEAD", reuse: true,
  },
  {
    title: "HEAD answered with Content-Length and nothing after", source: "s3x (response/content-length.md 'Content-Length reset when no body is received': skipBody)",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 123\r\n\r\n",
    expect: accept(200, "", { "content-length": "123" }), method: "HEAD", reuse: true,
  },
];
