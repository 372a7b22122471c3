/** rm and mv: what is deleted or moved, and what is printed. */
import type { Scenario } from "../scenario.js";
import { localTree, remoteTree } from "./fixtures.js";

export const rmMvScenarios: Scenario[] = [
  {
    name: "rm one object",
    remote: { "p/a.txt": "alpha\n", "p/b.txt": "beta\n" },
    steps: [["rm", "s3://{b}/p/a.txt"]],
  },
  {
    name: "rm of a missing key",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["rm", "s3://{b}/p/missing.txt"]],
  },
  {
    name: "rm --dryrun one object prints and deletes nothing",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["rm", "--dryrun", "s3://{b}/p/a.txt"]],
  },
  {
    name: "rm --recursive prefix (with folder markers)",
    remote: { ...remoteTree("p/"), "p/marker/": "", "pq/not-under-p.txt": "stay\n" },
    steps: [["rm", "--recursive", "s3://{b}/p/"]],
  },
  {
    name: "rm --recursive with --exclude/--include",
    remote: remoteTree("p/"),
    steps: [["rm", "--recursive", "s3://{b}/p/", "--exclude", "*", "--include", "*.txt", "--exclude", "sub/*"]],
  },
  {
    name: "rm --recursive with a filter before the path",
    remote: remoteTree("p/"),
    steps: [["rm", "--exclude=*.bin", "--recursive", "s3://{b}/p/"]],
  },
  {
    name: "rm --recursive --dryrun prints and deletes nothing",
    remote: remoteTree("p/"),
    steps: [["rm", "s3://{b}/p/", "--dryrun", "--recursive"]],
  },
  {
    name: "rm --recursive --quiet prints nothing",
    stderrEmptiness: true,
    remote: remoteTree("p/"),
    steps: [["rm", "s3://{b}/p/", "--recursive", "--quiet"]],
  },
  {
    name: "mv file → S3 removes the file",
    local: { "f.txt": "hello\n", "g.txt": "stays\n" },
    steps: [["mv", "f.txt", "s3://{b}/m/"]],
  },
  {
    name: "mv S3 → file removes the object",
    remote: { "p/a.txt": "alpha\n", "p/b.txt": "beta\n" },
    steps: [["mv", "s3://{b}/p/a.txt", "a-moved.txt"]],
  },
  {
    name: "mv S3 → S3 one object",
    remote: { "p/a.txt": { body: "alpha\n", contentType: "text/x-alpha", metadata: { k: "v" } } },
    steps: [["mv", "s3://{b}/p/a.txt", "s3://{b2}/moved/"]],
  },
  {
    name: "mv --recursive directory → prefix",
    local: localTree("d"),
    steps: [["mv", "--recursive", "d", "s3://{b}/p/"]],
  },
  {
    name: "mv --recursive prefix → prefix with --exclude",
    remote: remoteTree("p/"),
    steps: [["mv", "--recursive", "s3://{b}/p/", "s3://{b}/q/", "--exclude", "sub/*"]],
  },
  {
    name: "mv --recursive prefix → directory",
    remote: remoteTree("p/"),
    steps: [["mv", "--recursive", "s3://{b}/p/", "out"]],
  },
  {
    name: "mv --dryrun one object prints and moves nothing",
    local: { "f.txt": "hello\n" },
    steps: [["mv", "--dryrun", "f.txt", "s3://{b}/m/f.txt"]],
  },
];
