/**
 * The names the CLI needs from the layers under the engine, in one place:
 * connecting to S3 from plain settings, the types of those settings, and
 * how a failure is described. cli/ imports neither s3/ nor net/ (issue #23):
 * a change down there touches this file, not every command.
 */
export { connect, type PayloadSigning, type S3Connection, type S3Settings } from "../s3/client.js";
export type { RequestSettings, SseCustomerKey } from "../s3/request-headers.js";
export type { ChecksumAlgorithm, GrantPermission, ObjectAttributes, ObjectRef, StorageSettings } from "../s3/operations.js";
export { describeFailure } from "../s3/errors.js";
export { CredentialSourceError } from "../s3/credentials.js";
export { DEFAULT_NET_OPTIONS, FileTlsSessionStore, SecureContexts, trustOf, type AddressStats, type NetOptions, type TlsSettings } from "../net/pools.js";
export { parseDnsServers, parsePinnedAddresses } from "../net/resolver.js";
