import assert from "node:assert/strict";
import { humanSize } from "../../../src/cli/commands/ls.js";

describe("cli/ls humanSize (aws-cli's --human-readable)", () => {
  it("prints what aws-cli's human_readable_size prints", () => {
    const cases: [number, string][] = [
      [0, "0 Bytes"],
      [1, "1 Byte"],
      [6, "6 Bytes"],
      [1023, "1023 Bytes"],
      [1024, "1.0 KiB"],
      [1536, "1.5 KiB"],
      [1048575, "1.0 MiB"], // rounds up into the next unit, as aws-cli
      [5 * 1024 * 1024, "5.0 MiB"],
      [1073741824, "1.0 GiB"],
      [3.5 * 1024 ** 4, "3.5 TiB"],
    ];
    for (const [bytes, text] of cases) assert.equal(humanSize(bytes), text, `${bytes}`);
  });
});
