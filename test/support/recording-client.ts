import { S3Client } from "@aws-sdk/client-s3";
import { HttpResponse, type HttpRequest } from "@smithy/core/protocols";
import { Readable } from "node:stream";
import { learnBucketRoutes } from "../../src/s3/bucket-routes.js";
import { signPayloads, signsPayloadUnder, type PayloadSigning } from "../../src/s3/payload-signing.js";

/**
 * A client whose request handler records every request and answers 200: it
 * stands in for the network only; the SDK's (and s3x's direct) request
 * building and signing run for real, with the payload policy of a run.
 */
export function recordingClient(endpoint: string, mode: PayloadSigning, direct = false): { client: S3Client; sent: HttpRequest[] } {
  const sent: HttpRequest[] = [];
  const client = new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    requestChecksumCalculation: "WHEN_REQUIRED",
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: HttpRequest) => {
        sent.push(request);
        return { response: new HttpResponse({ statusCode: 200, headers: { etag: '"e"', "content-length": "0" }, body: Readable.from([]) }) };
      },
    },
  });
  signPayloads(client, mode);
  // Without learnt routes every request stays with the SDK (s3/bucket-routes.ts).
  if (direct) learnBucketRoutes(client, (protocol, checked) => signsPayloadUnder(mode, protocol, checked));
  return { client, sent };
}

