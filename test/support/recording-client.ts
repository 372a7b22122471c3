import type { WireOptions, WireRequest, WireSender } from "../../src/net/transport.js";
import type { HttpAnswer } from "../../src/net/http-answer.js";
import { ResponseBody } from "../../src/net/response-body.js";
import { S3Requester, type RequesterSettings } from "../../src/s3/request.js";
import type { PayloadSigning } from "../../src/s3/payload-signing.js";

/** What a recording transport answers a request with. */
export interface CannedAnswer {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** A body that has already arrived whole. */
export function bodyOf(bytes: string | Buffer = ""): ResponseBody {
  const body = new ResponseBody();
  const buffer = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  if (buffer.length > 0) body.deliver(buffer);
  body.finish();
  return body;
}

/**
 * A stand-in for the network: records every request s3x's request layer
 * hands to the transport (signed, on the wire's terms) with its options,
 * and answers as `answer` says (default: 200, an ETag, no body). The
 * request layer's routing, headers and signing run for real.
 */
export function recordingRequester(
  endpointUrl: string | undefined,
  payloadSigning: PayloadSigning = "auto",
  answer: (request: WireRequest) => CannedAnswer = () => ({ statusCode: 200, headers: { etag: '"e"' } }),
  settings: Partial<RequesterSettings> = {},
): { s3: S3Requester; sent: WireRequest[]; options: (WireOptions | undefined)[] } {
  const sent: WireRequest[] = [];
  const options: (WireOptions | undefined)[] = [];
  const transport: WireSender = {
    async send(request: WireRequest, sendOptions?: WireOptions): Promise<HttpAnswer> {
      sent.push(request);
      options.push(sendOptions);
      // Answered a turn later than sent, so concurrent requests overlap as on a network.
      await new Promise((resolve) => setImmediate(resolve));
      const canned = answer(request);
      return { statusCode: canned.statusCode, headers: canned.headers ?? {}, body: bodyOf(canned.body) };
    },
  };
  const s3 = new S3Requester(
    {
      endpoint: { region: "us-east-1", endpointUrl, forcePathStyle: endpointUrl !== undefined },
      credentials: async () => CREDENTIALS,
      payloadSigning,
      ...settings,
    },
    transport,
  );
  return { s3, sent, options };
}

const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" };
