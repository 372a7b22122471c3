/** cp --recursive both ways and between prefixes, with filters wherever aws-cli accepts them. */
import type { Scenario } from "../scenario.js";
import { localTree, remoteTree } from "./fixtures.js";

export const cpRecursive: Scenario[] = [
  {
    name: "cp --recursive directory → prefix (nested, empty file, space, unicode)",
    local: localTree("d"),
    steps: [["cp", "--recursive", "d", "s3://{b}/p/"]],
  },
  {
    name: "cp --recursive directory (trailing /) → prefix without /",
    local: localTree("d"),
    steps: [["cp", "--recursive", "./d/", "s3://{b}/p"]],
  },
  {
    name: "cp --recursive prefix → new local directory",
    remote: remoteTree("p/"),
    steps: [["cp", "--recursive", "s3://{b}/p/", "out"]],
  },
  {
    name: "cp --recursive prefix without / → existing local directory",
    local: { "out/keep.txt": "kept\n" },
    remote: { ...remoteTree("p/"), "pq/not-under-p.txt": "no\n" },
    steps: [["cp", "--recursive", "s3://{b}/p", "out/"]],
  },
  {
    name: "cp --recursive prefix → prefix in another bucket",
    remote: remoteTree("p/"),
    steps: [["cp", "--recursive", "s3://{b}/p/", "s3://{b2}/q/"]],
  },
  {
    name: "cp --recursive whole bucket → local directory",
    remote: remoteTree(""),
    steps: [["cp", "--recursive", "s3://{b}", "all"]],
  },
  {
    name: "cp --recursive --exclude before the paths",
    local: localTree("d"),
    steps: [["cp", "--recursive", "--exclude", "*.bin", "./d", "s3://{b}/p/"]],
  },
  {
    name: "cp --recursive filters both before and after the paths",
    local: localTree("d"),
    steps: [["cp", "--recursive", "--exclude", "*", "d", "s3://{b}/p/", "--include", "*.txt"]],
  },
  {
    name: "cp --recursive filters after the paths as --opt=value",
    local: localTree("d"),
    steps: [["cp", "--recursive", "d", "s3://{b}/p/", "--exclude=*", "--include=sub/*", "--exclude=sub/deeper/*"]],
  },
  {
    name: "cp --recursive download with --exclude/--include (last match wins)",
    remote: remoteTree("p/"),
    steps: [["cp", "--recursive", "s3://{b}/p/", "out", "--exclude", "*", "--include", "*.txt", "--exclude", "sub/*"]],
  },
  {
    name: "cp --recursive S3 → S3 with --exclude",
    remote: remoteTree("p/"),
    steps: [["cp", "--exclude", "sub/*", "--recursive", "s3://{b}/p/", "s3://{b}/q/"]],
  },
  {
    name: "cp --recursive download of folder markers",
    remote: { "p/": "", "p/emptydir/": "", "p/sub/": "", "p/sub/x.txt": "x\n" },
    steps: [["cp", "--recursive", "s3://{b}/p/", "out"]],
  },
  {
    name: "cp --recursive S3 → S3 copies folder markers",
    remote: { "p/emptydir/": "", "p/sub/x.txt": "x\n" },
    steps: [["cp", "--recursive", "s3://{b}/p/", "s3://{b}/q/"]],
  },
  {
    name: "cp --recursive upload skips empty directories",
    local: { "d/empty/": "", "d/sub/x.txt": "x\n" },
    steps: [["cp", "--recursive", "d", "s3://{b}/p/"]],
  },
  {
    name: "cp --recursive of a missing prefix copies nothing",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "--recursive", "s3://{b}/nothing/", "out"]],
  },
  {
    name: "cp --recursive --dryrun upload prints and stores nothing",
    local: localTree("d"),
    steps: [["cp", "--recursive", "d", "s3://{b}/p/", "--dryrun"]],
  },
  {
    name: "cp --recursive --quiet download prints nothing",
    stderrEmptiness: true,
    remote: remoteTree("p/"),
    steps: [["cp", "--quiet", "--recursive", "s3://{b}/p/", "out"]],
  },
];
