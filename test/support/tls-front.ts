import { readFileSync } from "node:fs";
import { connect, type AddressInfo, type Socket } from "node:net";
import { createServer } from "node:tls";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeCertificate } from "./certificate.js";
import { freshBucket, testS3, type TestS3 } from "./s3-server.js";

/**
 * A TLS front for the S3 server: it terminates TLS with a throw-away
 * self-signed certificate (made with the openssl command) and relays the
 * bytes to the server's plain-HTTP port. The shared test server is started
 * once, without TLS, for every test file; a front lets one file bring its
 * own certificate. It is a transport, not a fake: every answer comes from
 * the real server.
 */
export interface TlsFront {
  /** https://127.0.0.1:PORT */
  endpoint: string;
  /** The self-signed certificate (PEM), to trust with --ca-bundle. */
  certFile: string;
  close(): Promise<void>;
}

export async function startTlsFront(targetHost: string, targetPort: number, dir: string): Promise<TlsFront> {
  const { certFile, keyFile } = makeCertificate(dir, "front");
  const sockets = new Set<Socket>();
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (client) => {
    const upstream = connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  // A client that rejects the certificate hangs up mid-handshake: not the front's problem.
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    certFile,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What a TLS test file shares: the server, its bucket, a scratch directory, the front, and an environment without the machine's CA bundle. */
export interface TlsTestSetup {
  s3: TestS3;
  bucket: string;
  dir: string;
  front: TlsFront;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** The shared test server behind a fresh TLS front, with a fresh bucket named after `name`. */
export async function startTlsTestSetup(name: string): Promise<TlsTestSetup> {
  const s3 = await testS3();
  const bucket = await freshBucket(s3, name);
  const dir = await mkdtemp(join(tmpdir(), `s3x-${name}-`));
  const front = await startTlsFront(s3.host, s3.port, dir);
  const env = { ...s3.env };
  delete env.AWS_CA_BUNDLE;
  return {
    s3,
    bucket,
    dir,
    front,
    env,
    close: async () => {
      await front.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
