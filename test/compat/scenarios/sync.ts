/** sync both ways and between prefixes: what is copied, deleted and printed. */
import type { Scenario } from "../scenario.js";
import { FUTURE, PAST, localTree, remoteTree } from "./fixtures.js";

/** Why s3x downloads more than aws-cli here (README: Differences from aws-cli). */
const SYNC_TIME_REASON = "sync downloads a same-size object whose time differs either way (aws-cli: only with --exact-timestamps), so an object rewritten in S3 at the same size is fetched";

export const syncScenarios: Scenario[] = [
  {
    name: "sync directory → empty prefix",
    local: localTree("d"),
    steps: [["sync", "d", "s3://{b}/p/"]],
  },
  {
    name: "sync upload twice: the second is a no-op",
    local: localTree("d"),
    steps: [
      ["sync", "d", "s3://{b}/p/"],
      ["sync", "d", "s3://{b}/p/"],
    ],
  },
  {
    name: "sync upload --delete removes what the directory lacks",
    local: { "d/a.txt": { body: "alpha\n", mtime: PAST } },
    remote: { "p/a.txt": "alpha\n", "p/gone.txt": "gone\n", "p/sub/gone2.txt": "gone\n", "other/stay.txt": "stay\n" },
    steps: [["sync", "d", "s3://{b}/p/", "--delete"]],
  },
  {
    name: "sync --delete never deletes what --exclude excludes",
    local: { "d/a.txt": "alpha\n" },
    remote: { "p/gone.txt": "gone\n", "p/keep.log": "kept\n" },
    steps: [["sync", "--delete", "--exclude", "*.log", "d", "s3://{b}/p/"]],
  },
  {
    name: "sync upload: newer same-size file copied, older skipped, other size copied",
    local: {
      "d/newer.txt": { body: "NEWER\n", mtime: FUTURE },
      "d/older.txt": { body: "OLDER\n", mtime: PAST },
      "d/grown.txt": { body: "grown longer\n", mtime: PAST },
    },
    remote: { "p/newer.txt": "newer\n", "p/older.txt": "older\n", "p/grown.txt": "grown\n" },
    steps: [["sync", "d", "s3://{b}/p/"]],
  },
  {
    name: "sync upload --size-only copies only a different size",
    local: {
      "d/newer.txt": { body: "NEWER\n", mtime: FUTURE },
      "d/grown.txt": { body: "grown longer\n", mtime: PAST },
    },
    remote: { "p/newer.txt": "newer\n", "p/grown.txt": "grown\n" },
    steps: [["sync", "d", "s3://{b}/p/", "--size-only"]],
  },
  {
    name: "sync --dryrun upload prints and stores nothing",
    local: localTree("d"),
    remote: { "p/extra.txt": "extra\n" },
    steps: [["sync", "--dryrun", "--delete", "d", "s3://{b}/p/"]],
  },
  {
    name: "sync prefix → new directory",
    remote: remoteTree("p/"),
    steps: [["sync", "s3://{b}/p/", "out"]],
  },
  {
    name: "sync download twice: the second is a no-op",
    remote: remoteTree("p/"),
    steps: [
      ["sync", "s3://{b}/p/", "out"],
      ["sync", "s3://{b}/p/", "out"],
    ],
  },
  {
    name: "sync download --delete removes local files the prefix lacks (and replaces a newer same-size file)",
    local: { "out/a.txt": { body: "alpha\n", mtime: FUTURE }, "out/stale.txt": "stale\n", "out/sub/stale2.txt": "stale\n" },
    remote: { "p/a.txt": "alpha\n", "p/new.txt": "new\n" },
    steps: [["sync", "s3://{b}/p/", "out", "--delete"]],
  },
  {
    name: "sync download: same size, a local file newer than the object is replaced, an older one kept",
    local: { "out/newer.txt": { body: "NEWER\n", mtime: FUTURE }, "out/older.txt": { body: "OLDER\n", mtime: PAST } },
    remote: { "p/newer.txt": "newer\n", "p/older.txt": "older\n" },
    steps: [["sync", "s3://{b}/p/", "out"]],
    differsOnPurpose: { reason: SYNC_TIME_REASON, s3xFiles: { "out/older.txt": "older\n" } },
    stdoutDiffers: { steps: [1], reason: SYNC_TIME_REASON },
  },
  {
    name: "sync download --exact-timestamps copies a same-size file with another mtime",
    local: { "out/newer.txt": { body: "NEWER\n", mtime: FUTURE } },
    remote: { "p/newer.txt": "newer\n" },
    steps: [["sync", "--exact-timestamps", "s3://{b}/p/", "out"]],
  },
  {
    name: "sync download with filters after the paths",
    remote: remoteTree("p/"),
    steps: [["sync", "s3://{b}/p/", "out", "--exclude", "*.bin", "--exclude=sub/deeper/*"]],
  },
  {
    name: "sync prefix → prefix copies only what is missing",
    remote: { "p/a.txt": "alpha\n", "p/b.txt": "beta\n" },
    remote2: { "q/a.txt": "alpha\n", "q/extra.txt": "extra\n" },
    steps: [["sync", "s3://{b}/p/", "s3://{b2}/q/", "--delete"]],
  },
  {
    name: "sync prefix → prefix twice: the second is a no-op",
    remote: remoteTree("p/"),
    steps: [
      ["sync", "s3://{b}/p/", "s3://{b}/q/"],
      ["sync", "s3://{b}/p/", "s3://{b}/q/"],
    ],
  },
  {
    name: "sync --quiet upload prints nothing",
    stderrEmptiness: true,
    local: localTree("d"),
    steps: [["sync", "d", "s3://{b}/p/", "--quiet"]],
  },
];
