/**
 * What integrity costs: client CPU-seconds per GiB for a 1 GiB upload in
 * each integrity mode (signed payload, UNSIGNED-PAYLOAD + CRC32C or
 * CRC64NVME, both, neither: interleaved, run by run), and for a 1 GiB download with and
 * without verification (a stored full-object CRC32C; --verify-etag's MD5).
 *
 *   npm run bench:checksums                 # 1 GiB, 3 runs, medians
 *   npm run bench:checksums -- --size 256 --runs 1
 *   npm run bench:checksums -- --uploads-only     # the upload modes only
 *
 * Uploads go through the FakeChecksumStore below (it checks checksums and
 * echoes them, as AWS does, so the default switches to UNSIGNED-PAYLOAD +
 * CRC32C), one straight to radosgw (which ignores them). Downloads that verify need a server that
 * stores checksums, which radosgw 16 does not: they go through the test
 * suite's FakeChecksumStore (an HTTP proxy in this process that adds S3's
 * checksum behaviour), and so does the "no verification" row, so both pay
 * the same proxy. The fake's CPU is this process's, not s3x's: client
 * CPU-seconds (GNU time of the s3x process) are what the table compares.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { checksumHasher, FakeChecksumStore } from "../test/support/fake-checksum-store.js";
import { digestOf } from "../src/engine/integrity/checksums.js";
import { arg, createBucket, flag, median, runBench, S3X_BIN, writeRandomFile } from "./common.js";
import { timed, TIME_PREFIX, type Sample } from "./timed.js";

const MiB = 1024 * 1024;
const sizeMiB = arg("size", 1024);
const runs = arg("runs", 3);
const size = sizeMiB * MiB;
const gib = size / (1024 * MiB);

runBench(async (server, dir) => {
  await createBucket(server, "bench");
  const fake = await new FakeChecksumStore(server).start();
  try {
    const src = join(dir, "src.bin");
    const expected = await writeRandomFile(src, size);
    const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey, AWS_REGION: server.region };
    const s3x = `${TIME_PREFIX} node ${S3X_BIN}`;
    const direct = `--endpoint-url ${server.endpoint} --no-progress --json`;
    const viaFake = `--endpoint-url ${fake.url} --no-progress --json`;
    const run = (command: string) => timed(command, env, server.pids());

    // The objects the download rows read: one without a checksum, one with a
    // full-object CRC32C, one single-part (MD5 ETag).
    if (!flag("uploads-only")) {
      await run(`${s3x} cp ${src} s3://bench/plain ${viaFake} --checksum-algorithm none`);
      await run(`${s3x} cp ${src} s3://bench/crc32c ${viaFake} --checksum-algorithm crc32c`);
      await run(`${s3x} cp ${src} s3://bench/single ${direct} --checksum-algorithm none --multipart-threshold 5GiB --max-memory ${Math.max(1024, sizeMiB * 2)}MiB`);
    }

    const down = join(dir, "down.bin");
    const verifiedDownload = async (stdout: string, verified: number): Promise<void> => {
      const stats = JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as { verifiedObjects?: number };
      if (stats.verifiedObjects !== verified) throw new Error(`expected ${verified} verified objects, got ${stats.verifiedObjects}`);
      if (createHash("sha256").update(await readFile(down)).digest("hex") !== expected) throw new Error("downloaded bytes differ");
      await rm(down, { force: true });
    };
    // Uploads by integrity mode (issue #24): what each costs the client per GiB. Through the fake (which
    // checks checksums, as AWS does) unless said; the fake's own CPU is this process's, not s3x's.
    const upload = (name: string, endpoint: string, flags: string) => ({
      name: `upload, ${name}`,
      command: `${s3x} cp ${src} s3://bench/up ${endpoint} ${flags}`.trimEnd(),
      check: async () => undefined,
    });
    const uploads = [
      upload("signed payload, no checksum (--payload-signing always --checksum-algorithm none)", viaFake, "--payload-signing always --checksum-algorithm none"),
      upload("default, server checks: UNSIGNED-PAYLOAD + CRC32C", viaFake, ""),
      upload("UNSIGNED-PAYLOAD + CRC64NVME (--checksum-algorithm crc64nvme)", viaFake, "--checksum-algorithm crc64nvme"),
      upload("signed payload + CRC32C (--payload-signing always)", viaFake, "--payload-signing always"),
      upload("UNSIGNED-PAYLOAD, no checksum (--payload-signing never --checksum-algorithm none)", viaFake, "--payload-signing never --checksum-algorithm none"),
      upload("default, server ignores (radosgw direct): signed payload, CRC32C on the first part only", direct, ""),
    ];
    const workloads: { name: string; command: string; check: (stdout: string) => Promise<void> }[] = [
      ...uploads,
      ...(flag("uploads-only") ? [] : [
      { name: "download, no stored checksum (no check)", command: `${s3x} cp s3://bench/plain ${down} ${viaFake}`, check: (out: string) => verifiedDownload(out, 0) },
      { name: "download, full-object CRC32C checked", command: `${s3x} cp s3://bench/crc32c ${down} ${viaFake}`, check: (out: string) => verifiedDownload(out, 1) },
      { name: "download, single-part, no check", command: `${s3x} cp s3://bench/single ${down} ${direct}`, check: (out: string) => verifiedDownload(out, 0) },
      { name: "download, single-part, --verify-etag (MD5)", command: `${s3x} cp s3://bench/single ${down} ${direct} --verify-etag`, check: (out: string) => verifiedDownload(out, 1) },
      ]),
    ];
    const results = new Map<string, Sample[]>();
    for (let i = 0; i < runs; i++) {
      for (const w of workloads) {
        const { sample, stdout } = await run(w.command);
        await w.check(stdout);
        results.set(w.name, [...(results.get(w.name) ?? []), sample]);
      }
    }
    console.log(`\nchecksum throughput in this process, 256 MiB buffer (s3x vs the test fake's independent implementations: JavaScript CRC32C/CRC64NVME, zlib CRC32, OpenSSL SHA-256):\n`);
    console.log("| algorithm | s3x GB/s | independent GB/s |");
    console.log("|---|---|---|");
    const sample = randomBytes(256 * MiB);
    const rate = async (f: () => Promise<unknown>): Promise<number> => {
      const t0 = process.hrtime.bigint();
      await f();
      return sample.length / (Number(process.hrtime.bigint() - t0) / 1e9) / 1e9;
    };
    for (const alg of ["CRC32C", "CRC32", "CRC64NVME", "SHA256"] as const) {
      const ours = await rate(() => digestOf(alg, sample));
      const js = await rate(async () => {
        const h = checksumHasher(alg);
        h.update(sample);
        return h.digest();
      });
      console.log(`| ${alg} | ${ours.toFixed(2)} | ${js.toFixed(2)} |`);
    }
    console.log(`\ns3x integrity cost — ${sizeMiB} MiB, ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB RAM, radosgw memstore on 127.0.0.1, medians of ${runs}\n`);
    console.log("| workload | wall s | client CPU-s/GiB | peak RSS MiB |");
    console.log("|---|---|---|---|");
    for (const [name, samples] of results) {
      console.log(
        `| ${name} | ${median(samples.map((s) => s.wall)).toFixed(2)} | ${(median(samples.map((s) => s.cpu)) / gib).toFixed(2)} | ${median(samples.map((s) => s.rssMiB)).toFixed(0)} |`,
      );
    }
  } finally {
    await fake.close();
  }
}, // Overwritten objects stay in memstore until radosgw's garbage collection (hours): room for every upload.
{ memstoreBytes: Math.max(8 * 1024 * MiB, size * (4 + 6 * runs)) });
