import { drain, type Call, type S3Requester } from "./request.js";
import { escapeXml } from "./xml.js";

/**
 * Creates a bucket in the run's region. As aws-cli does, a region other
 * than us-east-1 is sent as the LocationConstraint (us-east-1 is S3's
 * default and AWS refuses it as a constraint).
 */
export async function createBucket(s3: S3Requester, bucket: string, call: Call = {}): Promise<{ region: string }> {
  const region = s3.settings.endpoint.region;
  const body =
    region && region !== "us-east-1"
      ? Buffer.from(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>${escapeXml(region)}</LocationConstraint></CreateBucketConfiguration>`, "utf8")
      : Buffer.alloc(0);
  const headers: Record<string, string> = body.length > 0 ? { "content-type": "application/xml" } : {};
  await drain(await s3.send({ operation: "CreateBucket", method: "PUT", bucket, headers, body, payload: "document" }, call));
  return { region };
}

/** Deletes an empty bucket (S3 refuses one that still holds objects: BucketNotEmpty). */
export async function deleteBucket(s3: S3Requester, bucket: string, call: Call = {}): Promise<void> {
  await drain(await s3.send({ operation: "DeleteBucket", method: "DELETE", bucket }, call));
}

/** HeadBucket: whether the bucket is there and the run may use it (its region is learnt on the way). */
export async function headBucket(s3: S3Requester, bucket: string, call: Call = {}): Promise<void> {
  await drain(await s3.send({ operation: "HeadBucket", method: "HEAD", bucket }, call));
}
