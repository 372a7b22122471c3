import { S3Client, CreateBucketCommand, ListMultipartUploadsCommand, GetObjectCommand, PutObjectCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { createHash, randomBytes } from "node:crypto";
import { ensureRadosgwInstalled, startRadosgw, type RadosgwServer } from "./radosgw.js";

/** The S3 server the integration tests talk to, and how to reach it. */
export interface TestS3 {
  endpoint: string;
  host: string;
  port: number;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** An SDK client for setting up and checking (never used to test s3x itself). */
  client: S3Client;
  /** Environment for running the s3x binary against this server. */
  env: NodeJS.ProcessEnv;
}

// The SDK's "future releases need Node 22" notice is noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

let starting: Promise<TestS3> | undefined;
let radosgw: RadosgwServer | undefined;

/**
 * Starts radosgw (memstore) once per test run, or uses S3X_TEST_ENDPOINT
 * (with S3X_TEST_ACCESS_KEY_ID / S3X_TEST_SECRET_ACCESS_KEY) when set.
 */
export function testS3(): Promise<TestS3> {
  starting ??= start();
  return starting;
}

async function start(): Promise<TestS3> {
  let endpoint = process.env.S3X_TEST_ENDPOINT;
  let accessKeyId = process.env.S3X_TEST_ACCESS_KEY_ID ?? "";
  let secretAccessKey = process.env.S3X_TEST_SECRET_ACCESS_KEY ?? "";
  let region = process.env.S3X_TEST_REGION ?? "us-east-1";
  if (!endpoint) {
    ensureRadosgwInstalled((line) => process.stderr.write(`  [radosgw] ${line}\n`));
    radosgw = await startRadosgw({ addresses: ["127.0.0.1"] });
    ({ endpoint, accessKeyId, secretAccessKey, region } = radosgw);
  }
  const url = new URL(endpoint);
  const client = new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
    AWS_REGION: region,
    AWS_ENDPOINT_URL: endpoint,
    // Keep the developer's own AWS configuration out of the tests.
    AWS_CONFIG_FILE: "/nonexistent/s3x-test-config",
    AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/s3x-test-credentials",
    AWS_PROFILE: "",
  };
  delete env.AWS_PROFILE;
  delete env.AWS_SESSION_TOKEN;
  // Every test endpoint is local (plain HTTP, or a TLS front trusted with
  // --ca-bundle); NODE_EXTRA_CA_CERTS would only cost each s3x run ~80 ms of start-up.
  delete env.NODE_EXTRA_CA_CERTS;
  return { endpoint, host: url.hostname, port: Number(url.port || 80), accessKeyId, secretAccessKey, region, client, env };
}

export async function stopTestS3(): Promise<void> {
  if (!starting) return;
  const s3 = await starting.catch(() => undefined);
  s3?.client.destroy();
  await radosgw?.stop();
  starting = undefined;
  radosgw = undefined;
}

/** A fresh bucket for one test file. */
export async function freshBucket(s3: TestS3, prefix = "t"): Promise<string> {
  const name = `${prefix}-${randomBytes(5).toString("hex")}`;
  await s3.client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

export async function openUploads(s3: TestS3, bucket: string): Promise<number> {
  const out = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return out.Uploads?.length ?? 0;
}

export async function objectHash(s3: TestS3, bucket: string, key: string): Promise<string> {
  const out = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const hash = createHash("sha256");
  for await (const chunk of out.Body as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest("hex");
}

export async function putTestObject(s3: TestS3, bucket: string, key: string, body: Buffer): Promise<void> {
  await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length }));
}

export async function objectExists(s3: TestS3, bucket: string, key: string): Promise<boolean> {
  try {
    await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch {
    return false;
  }
}
