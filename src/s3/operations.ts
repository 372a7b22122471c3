/**
 * The S3 operations the engine calls, by job: object reads
 * (s3/object-read.ts), writes and multipart uploads (s3/object-write.ts),
 * server-side copies (s3/copy.ts), checksum fields (s3/checksum-fields.ts).
 * Each is a thin wrapper over s3/request.ts, the one way requests go out.
 */
export type { Call, ObjectRef } from "./object-ref.js";
export type { GrantPermission, ObjectAttributes, StorageSettings } from "./attributes.js";
export type { ChecksumAlgorithm, ChecksumCall, ChecksumType, ChecksumValue, MultipartChecksum } from "./checksum-fields.js";
export type { BodySlices } from "./read-body.js";
export { getRange, headObject, ObjectLargerThanBufferError, type ObjectInfo, type RangeRequest, type RangeResult } from "./object-read.js";
export {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  listParts,
  putObject,
  uploadPart,
  type CompletedPart,
  type StoredPart,
} from "./object-write.js";
export { copyObject, uploadPartCopy } from "./copy.js";
