import assert from "node:assert/strict";
import { listPages, type ListPage } from "../../../src/s3/list.js";

type Answer = ListPage & { nextToken?: string };

/** A pager over `pages` that records each request and when it was made. */
function pager(pages: Answer[], failAt?: number) {
  const requested: (string | undefined)[] = [];
  const list = async (token: string | undefined): Promise<Answer> => {
    requested.push(token);
    const index = token === undefined ? 0 : Number(token);
    await new Promise((resolve) => setImmediate(resolve));
    if (index === failAt) throw new Error(`page ${index} failed`);
    return pages[index];
  };
  return { list, requested };
}

function page(index: number, last: boolean): Answer {
  return { objects: [{ key: `k${index}`, size: index, lastModified: new Date(0), etag: `"e${index}"` }], prefixes: [], nextToken: last ? undefined : String(index + 1) };
}

describe("listPages", () => {
  it("yields every page in order and asks for each one once", async () => {
    const { list, requested } = pager([page(0, false), page(1, false), page(2, true)]);
    const keys: string[] = [];
    for await (const p of listPages(list)) keys.push(...p.objects.map((o) => o.key));
    assert.deepEqual(keys, ["k0", "k1", "k2"]);
    assert.deepEqual(requested, [undefined, "1", "2"]);
  });

  it("asks for the next page before the caller has handled this one", async () => {
    const { list, requested } = pager([page(0, false), page(1, true)]);
    const seenWhenYielded: number[] = [];
    for await (const _ of listPages(list)) seenWhenYielded.push(requested.length);
    // While page 0 was with the caller, page 1 was already requested.
    assert.deepEqual(seenWhenYielded, [2, 2]);
  });

  it("a caller that stops early leaves no unhandled failure from the page asked ahead", async () => {
    const { list, requested } = pager([page(0, false), page(1, true)], 1);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      for await (const p of listPages(list)) {
        assert.equal(p.objects[0].key, "k0");
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    assert.deepEqual(requested, [undefined, "1"]);
    assert.deepEqual(unhandled, []);
  });

  it("a page asked ahead that fails while the caller is busy is not unhandled, and fails the listing when reached", async () => {
    const { list } = pager([page(0, false), page(1, true)], 1);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const keys: string[] = [];
    try {
      await assert.rejects(
        (async () => {
          for await (const p of listPages(list)) {
            keys.push(...p.objects.map((o) => o.key));
            // Busy with this page (transfers) long after the next one failed.
            await new Promise((resolve) => setTimeout(resolve, 30));
          }
        })(),
        /page 1 failed/,
      );
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    assert.deepEqual(keys, ["k0"]);
    assert.deepEqual(unhandled, []);
  });

  it("a failed page fails the listing after the pages before it", async () => {
    const { list } = pager([page(0, false), page(1, false), page(2, true)], 1);
    const keys: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const p of listPages(list)) keys.push(...p.objects.map((o) => o.key));
      })(),
      /page 1 failed/,
    );
    assert.deepEqual(keys, ["k0"]);
  });
});
