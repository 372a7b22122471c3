import { accept, refuse, refuseBody, TO_CLOSE, NOT_HTTP, TE_DIFF, SWITCH_DIFF, STATUS, BARE, FOLD, NAME, DUP_CL, BOTH, CL, TE, SIZE, EXT, CHUNK, CLOSED, LONGER, SWITCH, type LlhttpCase } from "./llhttp-cases.js";

/** The cases of llhttp's test/response/*.md that apply to a client, with their strict-mode verdicts (see llhttp-cases.ts). */
export const RESPONSE_CASES: LlhttpCase[] = [
  {
    title: "Simple response", source: "response/sample.md",
    raw: "HTTP/1.1 200 OK\r\nHeader1: Value1\r\nHeader2:\t Value2\r\nContent-Length: 0\r\n\r\n",
    expect: accept(200, "", { header1: "Value1", header2: "Value2" }), reuse: true,
  },
  {
    title: "RTSP response", source: "response/sample.md",
    raw: "RTSP/1.1 200 OK\r\n\r\n",
    expect: refuse(STATUS),
    differs: NOT_HTTP,
  },
  {
    title: "ICE response", source: "response/sample.md",
    raw: "ICE/1.1 200 OK\r\n\r\n",
    expect: refuse(STATUS),
    differs: NOT_HTTP,
  },
  {
    title: "Error on invalid response start", source: "response/sample.md",
    raw: "HTTPER/1.1 200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Empty body should not trigger spurious span callbacks", source: "response/sample.md",
    raw: "HTTP/1.1 200 OK\r\n\r\n",
    expect: accept(200, ""), close: true,
  },
  {
    title: "Google 301", source: "response/sample.md",
    raw: "HTTP/1.1 301 Moved Permanently\r\nLocation: http://www.google.com/\r\nContent-Type: text/html; charset=UTF-8\r\nDate: Sun, 26 Apr 2009 11:11:49 GMT\r\nExpires: Tue, 26 May 2009 11:11:49 GMT\r\nX-$PrototypeBI-Version: 1.6.0.3\r\nCache-Control: public, max-age=2592000\r\nServer: gws\r\nContent-Length:  219  \r\n\r\n<HTML><HEAD><meta http-equiv=content-type content=text/html;charset=utf-8>\n<TITLE>301 Moved</TITLE></HEAD><BODY>\n<H1>301 Moved</H1>\nThe document has moved\n<A HREF=\"http://www.google.com/\">here</A>.\r\n</BODY></HTML>",
    expect: refuseBody(301, CLOSED), close: true,
    note: "Content-Length 219, 213 bytes sent: llhttp leaves the message unfinished",
  },
  {
    title: "amazon.com", source: "response/sample.md",
    raw: "HTTP/1.1 301 MovedPermanently\r\nDate: Wed, 15 May 2013 17:06:33 GMT\r\nServer: Server\r\nx-amz-id-1: 0GPHKXSJQ826RK7GZEB2\r\np3p: policyref=\"http://www.amazon.com/w3c/p3p.xml\",CP=\"CAO DSP LAW CUR ADM IVAo IVDo CONo OTPo OUR DELi PUBi OTRi BUS PHY ONL UNI PUR FIN COM NAV INT DEM CNT STA HEA PRE LOC GOV OTC \"\r\nx-amz-id-2: STN69VZxIFSz9YJLbz1GDbxpbjG6Qjmmq5E3DxRhOUw+Et0p4hr7c/Q8qNcx4oAD\r\nLocation: http://www.amazon.com/Dan-Brown/e/B000AP9DSU/ref=s9_pop_gw_al1?_encoding=UTF8&refinementId=618073011&pf_rd_m=ATVPDKIKX0DER&pf_rd_s=center-2&pf_rd_r=0SHYY5BZXN3KR20BNFAY&pf_rd_t=101&pf_rd_p=1263340922&pf_rd_i=507846\r\nVary: Accept-Encoding,User-Agent\r\nContent-Type: text/html; charset=ISO-8859-1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n\n\r\n0\r\n\r\n",
    expect: accept(301, "\n"),
  },
  {
    title: "No headers and no body", source: "response/sample.md",
    raw: "HTTP/1.1 404 Not Found\r\n\r\n",
    expect: accept(404, ""), close: true,
  },
  {
    title: "No reason phrase", source: "response/sample.md",
    raw: "HTTP/1.1 301\r\n\r\n",
    expect: accept(301, ""), close: true,
  },
  {
    title: "Empty reason phrase after space", source: "response/sample.md",
    raw: "HTTP/1.1 200 \r\n\r\n",
    expect: accept(200, ""), close: true,
  },
  {
    title: "No carriage ret", source: "response/sample.md",
    raw: "HTTP/1.1 200 OK\nContent-Type: text/html; charset=utf-8\nConnection: close\n\nthese headers are from http://news.ycombinator.com/",
    expect: refuse(BARE),
  },
  {
    title: "Underscore in header key", source: "response/sample.md",
    raw: "HTTP/1.1 200 OK\r\nServer: DCLK-AdSvr\r\nContent-Type: text/xml\r\nContent-Length: 0\r\nDCLK_imp: v7;x;114750856;0-0;0;17820020;0/0;21603567/21621457/1;;~okv=;dcmt=text/xml;;~cs=o\r\n\r\n",
    expect: accept(200, ""),
  },
  {
    title: "bonjourmadame.fr", source: "response/sample.md",
    raw: "HTTP/1.0 301 Moved Permanently\r\nDate: Thu, 03 Jun 2010 09:56:32 GMT\r\nServer: Apache/2.2.3 (Red Hat)\r\nCache-Control: public\r\nPragma: \r\nLocation: http://www.bonjourmadame.fr/\r\nVary: Accept-Encoding\r\nContent-Length: 0\r\nContent-Type: text/html; charset=UTF-8\r\nConnection: keep-alive\r\n\r\n",
    expect: accept(301, "", { pragma: "", location: "http://www.bonjourmadame.fr/" }), reuse: true,
  },
  {
    title: "Spaces in header value", source: "response/sample.md",
    raw: "HTTP/1.1 200 OK\r\nDate: Tue, 28 Sep 2010 01:14:13 GMT\r\nServer: Apache\r\nCache-Control: no-cache, must-revalidate\r\nExpires: Mon, 26 Jul 1997 05:00:00 GMT\r\n.et-Cookie: PlaxoCS=1274804622353690521; path=/; domain=.plaxo.com\r\nVary: Accept-Encoding\r\n_eep-Alive: timeout=45\r\n_onnection: Keep-Alive\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n0\r\n\r\n",
    expect: accept(200, ""),
  },
  {
    title: "Spaces in header name", source: "response/sample.md",
    raw: "HTTP/1.1 200 OK\r\nServer: Microsoft-IIS/6.0\r\nX-Powered-By: ASP.NET\r\nen-US Content-Type: text/xml\r\nContent-Type: text/xml\r\nContent-Length: 16\r\nDate: Fri, 23 Jul 2010 18:45:38 GMT\r\nConnection: keep-alive\r\n\r\n<xml>hello</xml>",
    expect: refuse(NAME),
  },
  {
    title: "Non ASCII in status line", source: "response/sample.md",
    raw: "HTTP/1.1 500 Ori\xc3\xabntatieprobleem\r\nDate: Fri, 5 Nov 2010 23:07:12 GMT+2\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    expect: accept(500, ""),
  },
  {
    title: "HTTP version 0.9", source: "response/sample.md",
    raw: "HTTP/0.9 200 OK\r\n\r\n",
    expect: refuse(STATUS),
    differs: NOT_HTTP,
  },
  {
    title: "No Content-Length, no Transfer-Encoding", source: "response/sample.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello world",
    expect: accept(200, "hello world"), close: true,
  },
  {
    title: "Response starting with CRLF", source: "response/sample.md",
    raw: "\r\nHTTP/1.1 200 OK\r\nHeader1: Value1\r\nHeader2:\t Value2\r\nContent-Length: 0\r\n\r\n",
    expect: accept(200, "", { header2: "Value2" }),
  },
  {
    title: "Response without `Content-Length`, but with body", source: "response/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nDate: Tue, 04 Aug 2009 07:59:32 GMT\r\nServer: Apache\r\nX-Powered-By: Servlet/2.5 JSP/2.1\r\nContent-Type: text/xml; charset=utf-8\r\nConnection: close\r\n\r\n<?xml version=\\\"1.0\\\" encoding=\\\"UTF-8\\\"?>\n<SOAP-ENV:Envelope xmlns:SOAP-ENV=\\\"http://schemas.xmlsoap.org/soap/envelope/\\\">\n  <SOAP-ENV:Body>\n    <SOAP-ENV:Fault>\n       <faultcode>SOAP-ENV:Client</faultcode>\n       <faultstring>Client Error</faultstring>\n    </SOAP-ENV:Fault>\n  </SOAP-ENV:Body>\n</SOAP-ENV:Envelope>",
    expect: accept(200, TO_CLOSE), close: true,
  },
  {
    title: "Content-Length-X", source: "response/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length-X: 0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n",
    expect: accept(200, "OK"),
  },
  {
    title: "Content-Length reset when no body is received", source: "response/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 123\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 456\r\n\r\n",
    expect: accept(200, "", { "content-length": "123" }), method: "HEAD", reuse: false,
    note: "a HEAD; the second answer is stray bytes, dropped with the connection",
  },
  {
    title: "Tabs in `Content-Length` (surrounding)", source: "response/content-length.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length:\t42\t\r\n\r\n",
    expect: refuseBody(200, CLOSED), close: true,
    note: "llhttp takes the head (length 42) and waits for a body that never comes",
  },
  {
    title: "Trailing space on chunked body", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n25  \r\nThis is the data in the first chunk\r\n\r\n1C\r\nand this is the second one\r\n\r\n0  \r\n\r\n",
    expect: refuse(SIZE),
  },
  {
    title: "`chunked` before other transfer-encoding", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nAccept: */*\r\nTransfer-Encoding: chunked, deflate\r\n\r\nWorld",
    expect: refuse(TE), close: true,
    differs: TE_DIFF,
  },
  {
    title: "multiple transfer-encoding where chunked is not the last one", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nAccept: */*\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\nWorld",
    expect: refuse(TE), close: true,
    differs: TE_DIFF,
  },
  {
    title: "`chunkedchunked` transfer-encoding does not enable chunked enconding", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nAccept: */*\r\nTransfer-Encoding: chunkedchunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n",
    expect: refuse(TE), close: true,
    differs: TE_DIFF,
  },
  {
    title: "Chunk extensions", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost\r\nTransfer-encoding: chunked\r\n\r\n5;ilovew3;somuchlove=aretheseparametersfor\r\nhello\r\n6;blahblah;blah\r\n world\r\n0\r\n\r\n",
    expect: accept(200, "hello world"),
  },
  {
    title: "No semicolon before chunk extensions", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost\r\nTransfer-encoding: chunked\r\n\r\n2 erfrferferf\r\naa\r\n0 rrrr\r\n\r\n",
    expect: refuse(SIZE),
  },
  {
    title: "No extension after semicolon", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost\r\nTransfer-encoding: chunked\r\n\r\n2;\r\naa\r\n0\r\n\r\n",
    expect: refuse(EXT),
  },
  {
    title: "Chunk extensions quoting", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5;ilovew3=\"I love; extensions\";somuchlove=\"aretheseparametersfor\";blah;foo=bar\r\nhello\r\n6;blahblah;blah\r\n world\r\n0\r\n",
    expect: refuseBody(200, CLOSED), close: true,
    note: "the input stops before the body's last CRLF: the quoted extensions are taken, the close then cuts the body",
  },
  {
    title: "Unbalanced chunk extensions quoting", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5;ilovew3=\"abc\";somuchlove=\"def; ghi\r\nhello\r\n6;blahblah;blah\r\n world\r\n0\r\n",
    expect: refuse(EXT),
  },
  {
    title: "Invalid OBS fold after chunked value", source: "response/transfer-encoding.md",
    raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n  abc\r\n\r\n5\r\nWorld\r\n0\r\n\r\n",
    expect: refuse(FOLD),
    note: "a lenient-headers case: strict llhttp refuses it (Unexpected whitespace after header value)",
  },
  {
    title: "Incomplete HTTP protocol", source: "response/invalid.md",
    raw: "HTP/1.1 200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Extra digit in HTTP major version", source: "response/invalid.md",
    raw: "HTTP/01.1 200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Extra digit in HTTP major version #2", source: "response/invalid.md",
    raw: "HTTP/11.1 200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Extra digit in HTTP minor version", source: "response/invalid.md",
    raw: "HTTP/1.01 200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Tab after HTTP version", source: "response/invalid.md",
    raw: "HTTP/1.1\t200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "CR before response and tab after HTTP version", source: "response/invalid.md",
    raw: "\rHTTP/1.1\t200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Headers separated by CR", source: "response/invalid.md",
    raw: "HTTP/1.1 200 OK\r\nFoo: 1\rBar: 2\r\n\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Bare CR after response line", source: "response/invalid.md",
    raw: "HTTP/1.1 200 OK\rContent-Length: 0\r\n\r\n",
    expect: refuse(BARE),
  },
  {
    title: "Bare CR followed by CR after response line", source: "response/invalid.md",
    raw: "HTTP/1.1 200 OK\r\rContent-Length: 4\r\n\r\nEvil",
    expect: refuse(BARE),
  },
  {
    title: "Invalid HTTP version", source: "response/invalid.md",
    raw: "HTTP/5.6 200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Invalid space after start line", source: "response/invalid.md",
    raw: "HTTP/1.1 200 OK\r\n Host: foo",
    expect: refuse(CLOSED), close: true,
    note: "the head never ends: llhttp refuses at the space, s3x judges a head once whole and so refuses at the close",
  },
  {
    title: "Extra space between HTTP version and status code", source: "response/invalid.md",
    raw: "HTTP/1.1  200 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Extra space between status code and reason", source: "response/invalid.md",
    raw: "HTTP/1.1 200  OK\r\n\r\n",
    expect: accept(200, ""), close: true,
  },
  {
    title: "One-digit status code", source: "response/invalid.md",
    raw: "HTTP/1.1 2 OK\r\n\r\n",
    expect: refuse(STATUS),
  },
  {
    title: "Only LFs present and no body", source: "response/invalid.md",
    raw: "HTTP/1.1 200 OK\nContent-Length: 0\n\n",
    expect: refuse(BARE),
  },
  {
    title: "Only LFs present", source: "response/invalid.md",
    raw: "HTTP/1.1 200 OK\nFoo: abc\nBar: def\n\nBODY\n\\",
    expect: refuse(BARE),
  },
  {
    title: "Proxy-Connection", source: "response/connection.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Length: 11\r\nProxy-Connection: close\r\nDate: Thu, 31 Dec 2009 20:55:48 +0000\r\n\r\nhello world",
    expect: accept(200, "hello world"), reuse: true,
  },
  {
    title: "HTTP/1.0 with keep-alive and EOF-terminated 200 status", source: "response/connection.md",
    raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nHTTP/1.0 200 OK",
    expect: accept(200, "HTTP/1.0 200 OK"), close: true,
  },
  {
    title: "HTTP/1.0 with keep-alive and 204 status", source: "response/connection.md",
    raw: "HTTP/1.0 204 No content\r\nConnection: keep-alive\r\n\r\nHTTP/1.0 200 OK",
    expect: accept(204, ""), reuse: false,
  },
  {
    title: "HTTP/1.1 with EOF-terminated 200 status", source: "response/connection.md",
    raw: "HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK",
    expect: accept(200, "HTTP/1.1 200 OK"), close: true,
  },
  {
    title: "HTTP/1.1 with 204 status", source: "response/connection.md",
    raw: "HTTP/1.1 204 No content\r\n\r\nHTTP/1.1 200 OK",
    expect: accept(204, ""), reuse: false,
  },
  {
    title: "HTTP/1.1 with keep-alive disabled and 204 status", source: "response/connection.md",
    raw: "HTTP/1.1 204 No content\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK",
    expect: accept(204, ""), reuse: false,
    differs: "llhttp completes the 204, then errors on the bytes after it (Data after `Connection: close`); s3x has the whole answer by then, keeps it and drops the connection",
  },
  {
    title: "HTTP/1.1 with keep-alive disabled, content-length", source: "response/connection.md",
    raw: "HTTP/1.1 200 No content\r\nContent-Length: 5\r\nConnection: close\r\n\r\n2ad731e3-4dcd-4f70-b871-0ad284b29ffc",
    expect: refuse(LONGER),
    note: "llhttp completes the 5-byte body, then errors on the rest",
  },
  {
    title: "HTTP 101 response with Upgrade and Content-Length header", source: "response/connection.md",
    raw: "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 4\r\n\r\nbodyproto",
    expect: refuse(SWITCH),
    differs: SWITCH_DIFF,
  },
  {
    title: "HTTP 101 response with Upgrade and Transfer-Encoding header", source: "response/connection.md",
    raw: "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nbo\r\n2\r\ndy\r\n0\r\n\r\nproto",
    expect: refuse(SWITCH),
    differs: SWITCH_DIFF,
  },
  {
    title: "HTTP 200 response with Upgrade header", source: "response/connection.md",
    raw: "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\nbody",
    expect: accept(200, "body"), close: true,
  },
  {
    title: "HTTP 200 response with Upgrade header and Content-Length", source: "response/connection.md",
    raw: "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 4\r\n\r\nbody",
    expect: accept(200, "body"),
  },
  {
    title: "HTTP 200 response with Upgrade header and Transfer-Encoding", source: "response/connection.md",
    raw: "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nUpgrade: h2c\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nbo\r\n2\r\ndy\r\n0\r\n\r\n",
    expect: accept(200, "body"),
  },
  {
    title: "HTTP 304 with Content-Length", source: "response/connection.md",
    raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    expect: accept(304, ""), reuse: false,
    note: "the second answer after the 304 is stray bytes, dropped with the connection",
  },
  {
    title: "HTTP 304 with Transfer-Encoding", source: "response/connection.md",
    raw: "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n",
    expect: accept(304, ""), reuse: false,
    note: "the second answer after the 304 is stray bytes, dropped with the connection",
  },
  {
    title: "HTTP 100 first, then 400", source: "response/connection.md",
    raw: "HTTP/1.1 100 Continue\r\n\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 14\r\nDate: Fri, 15 Sep 2023 19:47:23 GMT\r\nServer: Python/3.10 aiohttp/4.0.0a2.dev0\r\n\r\n404: Not Found",
    expect: accept(404, "404: Not Found"),
  },
  {
    title: "HTTP 103 first, then 200", source: "response/connection.md",
    raw: "HTTP/1.1 103 Early Hints\r\nLink: </styles.css>; rel=preload; as=style\r\n\r\nHTTP/1.1 200 OK\r\nDate: Wed, 13 Sep 2023 11:09:41 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 17\r\n\r\nresponse content",
    expect: refuseBody(200, CLOSED), close: true,
    note: "Content-Length 17, 16 bytes sent: llhttp leaves the message unfinished",
  },
  {
    title: "It should be safe to finish with cb after empty response", source: "response/finish.md",
    raw: "HTTP/1.1 200 OK\r\n\r\n",
    expect: accept(200, ""), close: true,
  },
  {
    title: "Should parse multiple events", source: "response/pipelining.md",
    raw: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nAAA\r\nHTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\nBBBB\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 5\r\n\r\nCCCC",
    expect: refuse(LONGER),
    differs: "llhttp parses three pipelined answers; s3x never pipelines, and bytes past a body's Content-Length fail it (the length may be wrong)",
  },
];
