import { stopTestS3 } from "./s3-server.js";

/** Mocha root hooks: the shared S3 server is stopped once, after every test. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestS3();
}
