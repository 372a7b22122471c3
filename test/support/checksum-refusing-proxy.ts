import { startRecordingProxy, type RecordedRequest, type RecordingProxy } from "./recording-proxy.js";

/**
 * A FAKE: an S3-compatible server that refuses S3's additional-checksum
 * headers, as some stores do (400 InvalidRequest to any request carrying
 * x-amz-checksum-<alg>, x-amz-checksum-algorithm or x-amz-checksum-type),
 * which radosgw 16 cannot play: it ignores them. Built on the recording
 * proxy in front of the real server: every other request is relayed to
 * radosgw untouched and answered by it; every request is recorded.
 * (x-amz-checksum-mode, which asks a GET for stored checksums, is let through.)
 */
export const CHECKSUM_REFUSED_XML =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidRequest</Code><Message>x-amz-checksum-* headers are not supported</Message></Error>';

/** Whether a request carries a checksum header such a server refuses. */
export function carriesChecksum(req: Pick<RecordedRequest, "headers">): boolean {
  return Object.keys(req.headers).some((name) => name.startsWith("x-amz-checksum-") && name !== "x-amz-checksum-mode");
}

/** Whether a request carries a checksum value (x-amz-checksum-<alg>), not only an algorithm or type. */
export function carriesChecksumValue(req: Pick<RecordedRequest, "headers">): boolean {
  return Object.keys(req.headers).some((name) => /^x-amz-checksum-(crc32|crc32c|crc64nvme|sha1|sha256)$/.test(name));
}

/**
 * `refuse`: "all" checksum headers (the default), or only checksum "values"
 * on PUTs (a store that lets CreateMultipartUpload name an algorithm, and
 * ignores it, but refuses the parts' checksums).
 */
export async function startChecksumRefusingProxy(targetHost: string, targetPort: number, refuse: "all" | "values" = "all"): Promise<RecordingProxy> {
  const proxy = await startRecordingProxy(targetHost, targetPort);
  const refused = refuse === "all" ? carriesChecksum : carriesChecksumValue;
  proxy.answer = (req) => (refused(req) ? { status: 400, body: CHECKSUM_REFUSED_XML } : undefined);
  return proxy;
}
