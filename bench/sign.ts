/**
 * CPU of SigV4 signing alone, in this process: s3x's signer (signHeadersSafely,
 * the usual-input check included) against @smithy/signature-v4 with its
 * signing key cached (signWithLibrary), on the requests a recursive download
 * sends (a ranged GET with If-Match per object). Interleaved rounds, so both
 * see the same machine load; prints CPU µs per request per round and the medians.
 *
 *   npm run build && node dist/bench/sign.js --requests 2000 --rounds 9
 */
import { signHeadersSafely, signWithLibrary, type SigningCredentials } from "../src/s3/sigv4.js";
import { arg, median } from "./common.js";

const requests = arg("requests", 2000);
const rounds = arg("rounds", 9);
const credentials: SigningCredentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };

type Signer = (path: string, headers: Record<string, string>, nowMs: number) => Promise<unknown>;
const ours: Signer = (path, headers, nowMs) => signHeadersSafely("GET", path, headers, credentials, "us-east-1", "s3", nowMs);
const library: Signer = (path, headers, nowMs) => signWithLibrary("GET", path, headers, credentials, "us-east-1", "s3", nowMs);

/** CPU microseconds per signed request. */
async function round(sign: Signer): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    const headers = { host: "127.0.0.1:7480", "x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", range: "bytes=0-8388607", "if-match": '"9b2cf535f27731c974343645a3985328"' };
    await sign(`/abtest/files/f${String(i).padStart(5, "0")}.bin`, headers, Date.now());
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / requests;
}

const main = async (): Promise<void> => {
  await round(ours);
  await round(library); // warm both up
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ([ours, library] as const) : ([library, ours] as const);
    for (const sign of order) (sign === ours ? a : b).push(await round(sign));
    console.log(`round ${r + 1}: s3x ${a[r].toFixed(1)} µs, library ${b[r].toFixed(1)} µs per request`);
  }
  console.log(`median CPU per request: s3x ${median(a).toFixed(1)} µs (${Math.min(...a).toFixed(1)}-${Math.max(...a).toFixed(1)}), library ${median(b).toFixed(1)} µs (${Math.min(...b).toFixed(1)}-${Math.max(...b).toFixed(1)}); ${requests} requests per round, ${rounds} rounds`);
};
void main();
