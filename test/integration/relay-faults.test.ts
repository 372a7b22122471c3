import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertExitedPromptly, runS3x, sha256, type RunResult } from "../support/cli.js";
import { slowDownStorm, startRangeTwistingProxy, type RangeTwistingProxy, type RelayedRequest, type Twist } from "../support/range-twisting-proxy.js";
import { freshBucket, putTestObject, testS3, type TestS3 } from "../support/s3-server.js";

const MiB = 1024 * 1024;
/** Longer than any run here takes on two loaded cores; a run still going then has hung, and fails the test. */
const HANG_GUARD_MS = 60_000;
const STORM_RUNS = 20;
/** Storm runs at once: they mostly sleep in retry backoff. */
const STORM_PARALLEL = 5;

/** Whether a run was killed by the guard (it hung) rather than ending by itself. */
function hung(res: RunResult): boolean {
  return res.signal === "SIGKILL";
}

function describeRun(res: RunResult): string {
  return `${hung(res) ? `hung (killed after ${HANG_GUARD_MS / 1000} s)` : `exit ${res.code}`}; stderr: ${res.stderr.slice(-2000)}`;
}

/** `count` answers to requests that `matches` picks get `twist`; every other answer is relayed untouched. */
function twistNext(count: number, twist: Twist, matches: (req: RelayedRequest) => boolean): (req: RelayedRequest) => Twist | undefined {
  let left = count;
  return (req) => {
    if (left <= 0 || !matches(req)) return undefined;
    left--;
    return twist;
  };
}

/**
 * Issue #35, points 1 and 2: wrong bytes never become a file, and no run
 * hangs. Downloads through the real CLI against radosgw behind a FAKE relay
 * (test/support/range-twisting-proxy.ts) that throttles (503 SlowDown) or
 * answers a range with other bytes, as caches, proxies and some
 * S3-compatible servers do; radosgw itself never does either.
 */
describe("downloads through a relay that twists answers (integration, real radosgw behind a FAKE relay)", function () {
  this.timeout(300_000);
  let s3: TestS3;
  let relay: RangeTwistingProxy;
  let bucket: string;
  let dir: string;
  /** Four ranges of 3 MiB (the first GET, three more), each written in slices to a file. */
  const object = randomBytes(11 * MiB + 123);
  /** A small tree for a download sync: one object in three ranges, one in a single GET. */
  const tree = [
    { key: "tree/a.bin", body: randomBytes(7 * MiB + 5) },
    { key: "tree/b.bin", body: randomBytes(64 * 1024) },
  ];
  /** `attempts`: 6 lets every storm run finish (the relay refuses one request at most 5 times running). */
  const s3x = (command: string[], through = relay, attempts = 6): Promise<RunResult> =>
    runS3x([...command, "--part-size", "3MiB", "--max-attempts", String(attempts), "--endpoint-url", through.endpoint], { env: s3.env, timeoutMs: HANG_GUARD_MS });
  /** Attempts for a relay that always lies: enough to show the lie is retried, few enough to keep the backoff short. */
  const LIAR_ATTEMPTS = 3;
  const isObjectHead = (req: RelayedRequest): boolean => req.method === "HEAD" && req.path.startsWith(`/${bucket}/object.bin`);
  const isLaterRange = (req: RelayedRequest): boolean => req.method === "GET" && req.range !== undefined && req.range.start > 0;

  before(async () => {
    s3 = await testS3();
    relay = await startRangeTwistingProxy(s3.host, s3.port);
    bucket = await freshBucket(s3, "relay");
    dir = await mkdtemp(join(tmpdir(), "s3x-relay-"));
    await putTestObject(s3, bucket, "object.bin", object);
    relay.knowObject(`/${bucket}/object.bin`, object);
    for (const { key, body } of tree) await putTestObject(s3, bucket, key, body);
  });

  beforeEach(() => {
    relay.twist = () => undefined;
  });

  after(async () => {
    await relay?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * Runs `run(i, stormRelay)` for i in 0..runs-1, a few at a time, each
   * through a relay of its own refusing 30-50 % of its requests (run i with
   * seed `seed + i`); stops starting new ones after the first failure.
   */
  async function storms(runs: number, seed: number, run: (i: number, stormRelay: RangeTwistingProxy) => Promise<void>): Promise<void> {
    let next = 0;
    let failed: unknown;
    const worker = async (): Promise<void> => {
      while (next < runs && failed === undefined) {
        const i = next++;
        const stormRelay = await startRangeTwistingProxy(s3.host, s3.port);
        // Never one request refused more than 5 times running: with 6 attempts, every run must finish.
        stormRelay.twist = slowDownStorm(0.3 + (0.2 * i) / (runs - 1), seed + i, 5);
        try {
          await run(i, stormRelay);
        } catch (err) {
          failed ??= err;
        } finally {
          await stormRelay.close();
        }
      }
    };
    await Promise.all(Array.from({ length: STORM_PARALLEL }, worker));
    if (failed !== undefined) throw failed;
  }

  describe("1. a 503 SlowDown never hangs a download", () => {
    it("one SlowDown on the HEAD that asks for the stored checksum: the download to a file ends, byte-exact", async () => {
      relay.twist = twistNext(1, "slow-down", isObjectHead);
      const target = join(dir, "head-slowdown.bin");
      const res = await s3x(["cp", `s3://${bucket}/object.bin`, target]);
      assert.equal(res.code, 0, describeRun(res));
      assert.equal(relay.twisted["slow-down"] > 0, true, "the relay refused the HEAD");
      assert.equal(sha256(await readFile(target)), sha256(object));
    });

    it("one SlowDown on the HEAD that asks for the stored checksum: the download to stdout ends, byte-exact", async () => {
      relay.twist = twistNext(1, "slow-down", isObjectHead);
      const res = await s3x(["cp", `s3://${bucket}/object.bin`, "-"]);
      assert.equal(res.code, 0, describeRun(res));
      assert.equal(sha256(res.stdout), sha256(object));
    });

    it(`a SlowDown storm (30-50 % of requests): ${STORM_RUNS} downloads to a file all end, byte-exact`, async () => {
      await storms(STORM_RUNS, 1000, async (i, stormRelay) => {
        const target = join(dir, `storm-${i}.bin`);
        const res = await s3x(["cp", `s3://${bucket}/object.bin`, target], stormRelay);
        assert.equal(res.code, 0, `run ${i}: ${describeRun(res)}`);
        assert.equal(sha256(await readFile(target)), sha256(object), `run ${i}`);
        await rm(target);
      });
    });

    it(`a SlowDown storm (30-50 % of requests): ${STORM_RUNS} downloads to stdout all end, byte-exact`, async () => {
      await storms(STORM_RUNS, 2000, async (i, stormRelay) => {
        const res = await s3x(["cp", `s3://${bucket}/object.bin`, "-"], stormRelay);
        assert.equal(res.code, 0, `run ${i}: ${describeRun(res)}`);
        assert.equal(sha256(res.stdout), sha256(object), `run ${i}`);
      });
    });

    it(`a SlowDown storm (30-50 % of requests): ${STORM_RUNS} download syncs all end, byte-exact`, async () => {
      await storms(STORM_RUNS, 3000, async (i, stormRelay) => {
        const target = join(dir, `sync-${i}`);
        const res = await s3x(["sync", `s3://${bucket}/tree/`, target], stormRelay);
        assert.equal(res.code, 0, `run ${i}: ${describeRun(res)}`);
        for (const { key, body } of tree) assert.equal(sha256(await readFile(join(target, key.slice("tree/".length)))), sha256(body), `run ${i}: ${key}`);
        await rm(target, { recursive: true });
      });
    });
  });

  describe("2. bytes other than the range asked for never become data", () => {
    const lies = {
      "wrong-range": { lie: "answers a later range with the object's first bytes (206, Content-Range bytes 0-…)", error: /S3X_RANGE_MISMATCH: the answer does not match the range asked for \(bytes=\d+-\d+\): / },
      "whole-object": { lie: "ignores Range on a later part (200, the whole object)", error: /S3X_RANGE_MISMATCH: the answer does not match the range asked for \(bytes=\d+-\d+\): / },
      "long-body": { lie: "sends a later range chunked with more bytes than its Content-Range says", error: /S3X_BODY_OVERFLOW: response body longer than expected / },
    } as const;
    for (const [twist, { lie, error }] of Object.entries(lies) as [keyof typeof lies, (typeof lies)[keyof typeof lies]][]) {
      const name = `${twist}.bin`;
      const failure = new RegExp(`GET s3://\\S+/object\\.bin bytes=\\d+-\\d+: ${error.source}.* after ${LIAR_ATTEMPTS} attempts`);

      it(`a relay that ${lie} once: the download to a file retries and is byte-exact`, async () => {
        relay.twist = twistNext(1, twist, isLaterRange);
        const target = join(dir, `once-${name}`);
        const res = await s3x(["cp", `s3://${bucket}/object.bin`, target]);
        assert.equal(relay.twisted[twist] > 0, true, "the relay lied");
        assert.equal(res.code, 0, describeRun(res));
        assert.equal(sha256(await readFile(target)), sha256(object));
      });

      it(`a relay that ${lie} once: the download to stdout retries and is byte-exact`, async () => {
        relay.twist = twistNext(1, twist, isLaterRange);
        const res = await s3x(["cp", `s3://${bucket}/object.bin`, "-"]);
        assert.equal(res.code, 0, describeRun(res));
        assert.equal(res.stdout.length, object.length);
        assert.equal(sha256(res.stdout), sha256(object));
      });

      it(`a relay that always ${lie}: a file download fails with a clear error, exit 1, no file under the final name`, async () => {
        relay.twist = (req) => (isLaterRange(req) ? twist : undefined);
        const sub = await mkdtemp(join(dir, `always-${twist}-`));
        const target = join(sub, name);
        const res = await s3x(["cp", `s3://${bucket}/object.bin`, target], relay, LIAR_ATTEMPTS);
        assert.equal(res.code, 1, describeRun(res));
        assertExitedPromptly(res);
        assert.match(res.stderr, failure);
        assert.deepEqual((await readdir(sub)).filter((f) => f === name), [], "no file under the final name");
      });

      it(`a relay that always ${lie}: a download to stdout fails with a clear error, exit 1, and writes only the object's true first bytes`, async () => {
        relay.twist = (req) => (isLaterRange(req) ? twist : undefined);
        const res = await s3x(["cp", `s3://${bucket}/object.bin`, "-"], relay, LIAR_ATTEMPTS);
        assert.equal(res.code, 1, describeRun(res));
        assertExitedPromptly(res);
        assert.match(res.stderr, failure);
        assert.ok(res.stdout.length < object.length, `${res.stdout.length} bytes written`);
        assert.equal(sha256(res.stdout), sha256(object.subarray(0, res.stdout.length)), "what was written is the object's start");
      });
    }
  });

  describe("3. a part that fails for good ends the download, never hangs it", () => {
    // The checksum HEAD is throttled twice (its retries sleep in backoff), and the later ranges are refused for good
    // (403): a range fails while part 0 still waits for the checksum, so part 0 is cancelled and never written.
    const failFast = (): void => {
      const slowHead = twistNext(2, "slow-down", isObjectHead);
      relay.twist = (req) => slowHead(req) ?? (isLaterRange(req) ? "access-denied" : undefined);
    };
    const once = (dest: string): Promise<RunResult> => s3x(["cp", `s3://${bucket}/object.bin`, dest]);

    for (let run = 0; run < 3; run++) {
      it(`to stdout (run ${run + 1} of 3): exit 1 with the range's error`, async () => {
        failFast();
        const res = await once("-");
        assert.equal(res.code, 1, describeRun(res));
        assertExitedPromptly(res);
        assert.match(res.stderr, /GET s3:\/\/\S+\/object\.bin bytes=\d+-\d+: AccessDenied: access denied/);
        assert.equal(sha256(res.stdout), sha256(object.subarray(0, res.stdout.length)), "what was written is the object's start");
      });
    }

    it("to a file: exit 1 with the range's error, no file under the final name", async () => {
      failFast();
      const sub = await mkdtemp(join(dir, "fail-fast-"));
      const res = await once(join(sub, "object.bin"));
      assert.equal(res.code, 1, describeRun(res));
      assertExitedPromptly(res);
      assert.match(res.stderr, /GET s3:\/\/\S+\/object\.bin bytes=\d+-\d+: AccessDenied: access denied/);
      assert.deepEqual((await readdir(sub)).filter((f) => f === "object.bin"), []);
    });
  });
});
