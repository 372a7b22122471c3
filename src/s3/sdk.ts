/**
 * The AWS SDK's S3 client and the commands s3x sends through it, imported
 * in this one module. The SDK ships CommonJS; the bundle wraps every ES
 * import of it in a copy of its ~2,000 exports (esbuild's __toESM), ~3 ms of
 * start-up per importing module. Other modules import from here instead.
 */
export {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
export type { BucketLocationConstraint, ObjectCannedACL, S3ClientConfig, ServerSideEncryption, StorageClass } from "@aws-sdk/client-s3";
