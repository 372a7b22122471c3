/**
 * The aws-cli compatibility suite: every scenario runs through aws-cli 2.9
 * (the specification) and through s3x against the same radosgw, each in
 * its own buckets and directory, and must end the same way: exit codes,
 * printed lines (after the normalisation in harness.ts), stored objects and
 * local files. Scenarios run a few at once (aws-cli takes ~1 s to start);
 * each test waits for its own.
 */
import assert from "node:assert/strict";
import PQueue from "p-queue";
import { testS3 } from "../support/s3-server.js";
import { awsCliFor, ensureAwsCliInstalled, type AwsCli } from "./aws-cli.js";
import { runScenario } from "./harness.js";
import type { Scenario } from "./scenario.js";
import { cpSingle } from "./scenarios/cp-single.js";
import { cpRecursive } from "./scenarios/cp-recursive.js";
import { syncScenarios } from "./scenarios/sync.js";
import { rmMvScenarios } from "./scenarios/rm-mv.js";
import { lsBucketScenarios } from "./scenarios/ls-buckets.js";
import { skipsAndFiltersScenarios } from "./scenarios/skips-and-filters.js";

const groups: Record<string, Scenario[]> = {
  cp: cpSingle,
  "cp --recursive": cpRecursive,
  sync: syncScenarios,
  "rm, mv": rmMvScenarios,
  "ls, mb, rb": lsBucketScenarios,
  "skipped files, absolute filters, folder markers": skipsAndFiltersScenarios,
};

/** Scenarios in flight at once: each runs aws-cli and s3x side by side. */
const CONCURRENT_SCENARIOS = 4;

type Outcome = { mismatches: string[] } | { error: unknown };

describe("aws-cli compatibility: aws-cli 2.9 and s3x side by side (real radosgw)", function () {
  const outcomes = new Map<Scenario, Promise<Outcome>>();
  let aws: AwsCli | undefined;

  before(async function () {
    this.timeout(300_000);
    ensureAwsCliInstalled((line) => process.stderr.write(`  [aws-cli] ${line}\n`));
    const s3 = await testS3();
    aws = awsCliFor(s3);
    const ctx = { s3, aws };
    const queue = new PQueue({ concurrency: CONCURRENT_SCENARIOS });
    for (const scenario of Object.values(groups).flat()) {
      const outcome = queue.add(() => runScenario(ctx, scenario)).then(
        (mismatches): Outcome => ({ mismatches: mismatches ?? [] }),
        (error: unknown): Outcome => ({ error }),
      );
      outcomes.set(scenario, outcome);
    }
  });

  after(async () => {
    await Promise.all(outcomes.values());
    await aws?.dispose();
  });

  for (const [group, scenarios] of Object.entries(groups)) {
    describe(group, () => {
      for (const scenario of scenarios) {
        it(scenario.name, async function () {
          // Waits behind the scenarios queued before this one.
          this.timeout(300_000);
          const outcome = await outcomes.get(scenario)!;
          if ("error" in outcome) throw outcome.error;
          if (outcome.mismatches.length > 0) assert.fail(`s3x differs from aws-cli:\n  ${outcome.mismatches.join("\n  ")}`);
        });
      }
    });
  }
});
