import { stopTestS3 } from "./s3-server.js";

// Every s3x a test runs starts with no TLS session kept by another test's run (a test that
// expects a full handshake would otherwise see a resumed one); tests of the cache name their own directory.
process.env.S3X_TLS_SESSION_CACHE = "off";

/** Mocha root hooks: the shared S3 server is stopped once, after every test. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestS3();
}
