/**
 * A workaround for radosgw's Nagle delay: whether a request should go out
 * on a new connection. Those are the requests that get an XML document back
 * (listings, CreateMultipartUpload, CompleteMultipartUpload, copies,
 * DeleteObjects, ListBuckets), as opposed to object data or an empty answer
 * (GET and HEAD of an object, PutObject, UploadPart, DeleteObject).
 *
 * Why: Ceph's radosgw (beast frontend, `tcp_nodelay` off by
 * default) writes such an answer's head and its body in two small writes.
 * On a kept-alive connection the client's kernel delays its ACK of the head
 * (it expects to piggyback it on the next request), and Nagle's algorithm on
 * the server holds the body until that ACK: every such request waits ~40 ms
 * (the delayed-ACK timer), measured here for all of the above (~50 ms each
 * instead of ~10 on a new connection). A new connection starts in quick-ACK
 * mode, so these requests go out on one (net/http1), which costs a TCP
 * handshake: on a LAN a fraction of a millisecond. Afterwards the connection
 * joins the keep-alive pool for object requests, which are not affected.
 */
export function needsFreshConnection(method: string, query: Record<string, unknown> | undefined, headers: Record<string, string>): boolean {
  switch (method) {
    case "POST":
      return true;
    case "PUT":
      return hasHeader(headers, "x-amz-copy-source");
    case "GET":
      if (!query) return false;
      for (const name in query) if (!OBJECT_GET_PARAMETERS.has(name) && !name.startsWith("response-")) return true;
      return query["x-id"] !== undefined && query["x-id"] !== "GetObject";
    default:
      return false;
  }
}

/** Query parameters an object GET may carry (the AWS SDK adds x-id=GetObject; s3x sends none). */
const OBJECT_GET_PARAMETERS: ReadonlySet<string> = new Set(["x-id", "partNumber", "versionId"]);

function hasHeader(headers: Record<string, string>, name: string): boolean {
  for (const key in headers) if (key.toLowerCase() === name) return true;
  return false;
}
