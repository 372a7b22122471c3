/**
 * What went wrong with one S3 request, in the terms retry policy and error
 * messages need: the HTTP status, the S3 error code, or the network cause.
 */
export interface RequestFailure {
  /** HTTP status, when a response arrived. */
  status?: number;
  /** S3 error code (NoSuchKey, SlowDown, …) or a Node/undici error code (ECONNRESET, UND_ERR_CONNECT_TIMEOUT, …). */
  code?: string;
  /** True when the request never got a complete response: connect, reset, timeout. */
  network: boolean;
  /** Human description, never empty. */
  message: string;
  /** Front-end address the request went to, when known. */
  address?: string;
}

interface SdkErrorShape {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  address?: string;
  /** The URL a request that never reached the server was for (net/failures noteEndpointUrl). */
  endpointUrl?: string;
  cause?: unknown;
  $metadata?: { httpStatusCode?: number };
  $response?: { statusCode?: number };
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
  "S3X_SHORT_BODY",
  "S3X_STRAGGLER",
]);

const UNTRUSTED_CA = "the server's TLS certificate comes from a CA that is not trusted (give the CA with --ca-bundle)";

/** Plain-words explanations of the codes users meet most. */
const EXPLANATIONS: Record<string, string> = {
  NoSuchBucket: "the bucket does not exist",
  NoSuchKey: "the object does not exist",
  BucketNotEmpty: "the bucket is not empty",
  BucketAlreadyExists: "the bucket name is taken",
  BucketAlreadyOwnedByYou: "the bucket already exists and is yours",
  InvalidBucketName: "the bucket name is not valid",
  NotFound: "not found",
  AccessDenied: "access denied",
  Forbidden: "access denied",
  InvalidAccessKeyId: "the access key id is not known to the server (check credentials)",
  SignatureDoesNotMatch: "the request signature does not match (check the secret key and clock)",
  SlowDown: "the server asked to slow down",
  InternalError: "the server had an internal error",
  PreconditionFailed: "the object changed during the transfer",
  InvalidRange: "the requested range is not satisfiable",
  EntityTooLarge: "the object or part is larger than the server allows",
  EntityTooSmall: "a part is smaller than the server allows",
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "the endpoint's host name does not resolve",
  UND_ERR_CONNECT_TIMEOUT: "connect timed out",
  UND_ERR_HEADERS_TIMEOUT: "no response before the first-byte timeout",
  UND_ERR_BODY_TIMEOUT: "the transfer stalled (no bytes moved before the stall timeout)",
  // TLS: never retried (not network failures), so one clear line says what to do.
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's TLS certificate is self-signed and not trusted (give it with --ca-bundle, or skip the check with --no-verify-ssl)",
  SELF_SIGNED_CERT_IN_CHAIN: UNTRUSTED_CA,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNTRUSTED_CA,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNTRUSTED_CA,
  CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's TLS certificate does not name the endpoint's host",
  ERR_SSL_WRONG_VERSION_NUMBER: "the server did not answer in TLS (does the endpoint take http://?)",
};

const STATUS_CODES: Record<number, string> = { 403: "AccessDenied", 404: "NotFound", 412: "PreconditionFailed", 416: "InvalidRange", 503: "SlowDown" };

/**
 * A failure judged elsewhere and carried here as data: a data-plane worker
 * thread describes its request's failure, the main thread's retry loop
 * decides on it (engine/workers). describeFailure gives it back unchanged.
 */
export class RelayedFailure extends Error {
  constructor(readonly failure: RequestFailure) {
    super(failure.message);
  }
}

export function describeFailure(err: unknown): RequestFailure {
  if (err instanceof RelayedFailure) return { ...err.failure };
  const e = (err ?? {}) as SdkErrorShape;
  const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
  let code = e.code ?? e.Code ?? (status !== undefined ? e.name : undefined);
  // The SDK names unmodelled errors "UnknownError" or after the status (radosgw sends empty messages).
  if ((code === undefined || code === "Unknown" || code === "UnknownError") && status !== undefined) code = STATUS_CODES[status] ?? code;
  const causeCode = (e.cause as SdkErrorShape | undefined)?.code;
  if (code === undefined && causeCode) code = causeCode;
  const network = status === undefined && code !== undefined && NETWORK_CODES.has(code);
  const explanation = (code && EXPLANATIONS[code]) || cleanMessage(e.message) || code || String(err);
  const parts = [code && code !== explanation ? `${code}: ${explanation}` : explanation];
  // aws-cli's words, which name the host and port the run was configured with.
  if (e.endpointUrl) parts[0] += `: could not connect to the endpoint URL "${e.endpointUrl}"`;
  if (status !== undefined) parts.push(`(HTTP ${status})`);
  return { status, code, network, message: parts.join(" "), address: e.address };
}

function cleanMessage(message: string | undefined): string | undefined {
  if (!message || message === "UnknownError" || message === "Unknown") return undefined;
  return message.split("\n")[0];
}

/**
 * The error a non-2xx answer stands for: the S3 error document's Code and
 * Message (none: the status says it), with the HTTP status in
 * $metadata.httpStatusCode and the answer's headers, in the shape
 * describeFailure reads (the AWS SDK's, which aws-cli-minded code and
 * tests know).
 */
export function errorFromText(statusCode: number, headers: Record<string, string>, text: string, operation?: string): Error {
  const code = xmlText(/<Code>([^<]*)<\/Code>/.exec(text)?.[1]);
  const message = xmlText(/<Message>([^<]*)<\/Message>/.exec(text)?.[1]);
  return Object.assign(new Error(message || code || `HTTP ${statusCode}`), {
    name: code || "Unknown",
    Code: code,
    $fault: statusCode >= 500 ? "server" : "client",
    $metadata: { httpStatusCode: statusCode, requestId: headers["x-amz-request-id"] },
    $response: { statusCode, headers },
    operation,
  });
}

const XML_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** An element's text with XML's five entities and numeric character references decoded ("don&apos;t" → "don't"). */
export function xmlText(raw: string | undefined): string | undefined {
  return raw?.replace(/&(?:#x([0-9a-fA-F]+)|#([0-9]+)|(lt|gt|amp|quot|apos));/g, (whole, hex: string | undefined, decimal: string | undefined, name: string | undefined) => {
    if (name) return XML_ENTITIES[name];
    const point = hex !== undefined ? parseInt(hex, 16) : Number(decimal);
    return point <= 0x10ffff ? String.fromCodePoint(point) : whole;
  });
}

/** The codes a server's failure inside a 200 carries that are transient: those become a 503, retried. */
const UNAVAILABLE_CODES = new Set(["SlowDown", "ServiceUnavailable", "InternalError", "Throttling", "ThrottlingException", "RequestTimeout"]);

/**
 * The error a 200 answer stands for, if any. S3 sends the 200 status of a
 * CompleteMultipartUpload or a copy before the work is done, so one that
 * fails late answers 200 with an <Error> document, or (a copy) with nothing
 * if the connection was cut. A transient code (or nothing) is a server failure,
 * status 503, retried; any other (InvalidPart, NoSuchUpload, EntityTooSmall…)
 * is the server's final word and keeps the 200 it came with.
 */
export function failureInOk(response: { headers: Record<string, string> }, text: string, operation: string, emptyIsFailure = false): Error | undefined {
  if (text.length === 0 && emptyIsFailure) return errorFromText(503, response.headers, "<Error><Code>InternalError</Code><Message>the request ended without an answer</Message></Error>", operation);
  if (!text.trimEnd().endsWith("</Error>")) return undefined;
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
  return errorFromText(code === undefined || UNAVAILABLE_CODES.has(code) ? 503 : 200, response.headers, text, operation);
}
