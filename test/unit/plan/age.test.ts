import assert from "node:assert/strict";
import { parseAge } from "../../../src/cli/commands/rm.js";

describe("rm --older-than durations", () => {
  it("reads seconds, minutes, hours, days and weeks", () => {
    assert.equal(parseAge("90"), 90_000);
    assert.equal(parseAge("30m"), 1_800_000);
    assert.equal(parseAge("12h"), 43_200_000);
    assert.equal(parseAge("1d"), 86_400_000);
    assert.equal(parseAge("2w"), 1_209_600_000);
    assert.throws(() => parseAge("yesterday"), /expected a duration/);
  });
});
