import assert from "node:assert/strict";
import { HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { HttpResponse } from "@smithy/core/protocols";
import type { HttpHandlerOptions } from "@smithy/types";
import { Readable } from "node:stream";
import { carrySignals, send, signalAwareHandler } from "../../../src/s3/request.js";

describe("s3/request: cancellation with a cached middleware stack", () => {
  it("hands each call's own signal to the request handler", async () => {
    const seen: (AbortSignal | undefined)[] = [];
    // Stands in for the network only: records the options the SDK passes down.
    const recorder = {
      handle: async (_request: unknown, options?: HttpHandlerOptions) => {
        seen.push(options?.abortSignal as AbortSignal | undefined);
        return { response: new HttpResponse({ statusCode: 200, headers: { "content-length": "0" }, body: Readable.from([]) }) };
      },
    };
    const client = new S3Client({
      endpoint: "http://127.0.0.1:9",
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      cacheMiddleware: true,
      requestHandler: signalAwareHandler(recorder as never),
    });
    carrySignals(client);
    const first = new AbortController();
    const second = new AbortController();
    await send(client, new HeadObjectCommand({ Bucket: "bkt", Key: "a" }), first.signal);
    await send(client, new HeadObjectCommand({ Bucket: "bkt", Key: "b" }), second.signal);
    await send(client, new HeadObjectCommand({ Bucket: "bkt", Key: "c" }));
    assert.equal(seen[0], first.signal);
    assert.equal(seen[1], second.signal);
    assert.equal(seen[2], undefined);
  });
});
