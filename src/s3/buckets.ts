import { send } from "./request.js";
import { CreateBucketCommand, DeleteBucketCommand, type BucketLocationConstraint, type S3Client } from "./sdk.js";

/**
 * Creates a bucket in the client's region. As aws-cli does, a region other
 * than us-east-1 is sent as the LocationConstraint (us-east-1 is S3's
 * default and AWS refuses it as a constraint).
 */
export async function createBucket(client: S3Client, bucket: string, signal?: AbortSignal): Promise<{ region: string }> {
  const region = await client.config.region();
  const constraint = region && region !== "us-east-1" ? { LocationConstraint: region as BucketLocationConstraint } : undefined;
  await send(client, new CreateBucketCommand({ Bucket: bucket, CreateBucketConfiguration: constraint }), signal);
  return { region };
}

/** Deletes an empty bucket (S3 refuses one that still holds objects: BucketNotEmpty). */
export async function deleteBucket(client: S3Client, bucket: string, signal?: AbortSignal): Promise<void> {
  await send(client, new DeleteBucketCommand({ Bucket: bucket }), signal);
}
