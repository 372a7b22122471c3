/** cp --recursive both ways and between prefixes, with filters wherever aws-cli accepts them. */
import type { Scenario } from "../scenario.js";
import { localTree, remoteTree } from "./fixtures.js";

export const cpRecursive: Scenario[] = [
  {
    name: "cp -r directory → prefix (nested, empty file, space, unicode)",
    local: localTree("d"),
    steps: [["cp", "-r", "d", "s3://{b}/p/"]],
  },
  {
    name: "cp -r directory (trailing /) → prefix without /",
    local: localTree("d"),
    steps: [["cp", "--recursive", "./d/", "s3://{b}/p"]],
  },
  {
    name: "cp -r prefix → new local directory",
    remote: remoteTree("p/"),
    steps: [["cp", "-r", "s3://{b}/p/", "out"]],
  },
  {
    name: "cp -r prefix without / → existing local directory",
    local: { "out/keep.txt": "kept\n" },
    remote: { ...remoteTree("p/"), "pq/not-under-p.txt": "no\n" },
    steps: [["cp", "-r", "s3://{b}/p", "out/"]],
  },
  {
    name: "cp -r prefix → prefix in another bucket",
    remote: remoteTree("p/"),
    steps: [["cp", "-r", "s3://{b}/p/", "s3://{b2}/q/"]],
  },
  {
    name: "cp -r whole bucket → local directory",
    remote: remoteTree(""),
    steps: [["cp", "-r", "s3://{b}", "all"]],
  },
  {
    name: "cp -r --exclude before the paths",
    local: localTree("d"),
    steps: [["cp", "-r", "--exclude", "*.bin", "./d", "s3://{b}/p/"]],
  },
  {
    name: "cp -r filters between the paths",
    local: localTree("d"),
    steps: [["cp", "d", "--exclude", "*", "--include", "*.txt", "s3://{b}/p/", "--recursive"]],
  },
  {
    name: "cp -r filters after the paths as --opt=value",
    local: localTree("d"),
    steps: [["cp", "-r", "d", "s3://{b}/p/", "--exclude=*", "--include=sub/*", "--exclude=sub/deeper/*"]],
  },
  {
    name: "cp -r download with --exclude/--include (last match wins)",
    remote: remoteTree("p/"),
    steps: [["cp", "-r", "s3://{b}/p/", "out", "--exclude", "*", "--include", "*.txt", "--exclude", "sub/*"]],
  },
  {
    name: "cp -r S3 → S3 with --exclude",
    remote: remoteTree("p/"),
    steps: [["cp", "--exclude", "sub/*", "-r", "s3://{b}/p/", "s3://{b}/q/"]],
  },
  {
    name: "cp -r download of folder markers",
    remote: { "p/": "", "p/emptydir/": "", "p/sub/": "", "p/sub/x.txt": "x\n" },
    steps: [["cp", "-r", "s3://{b}/p/", "out"]],
  },
  {
    name: "cp -r S3 → S3 copies folder markers",
    remote: { "p/emptydir/": "", "p/sub/x.txt": "x\n" },
    steps: [["cp", "-r", "s3://{b}/p/", "s3://{b}/q/"]],
  },
  {
    name: "cp -r upload skips empty directories",
    local: { "d/empty/": "", "d/sub/x.txt": "x\n" },
    steps: [["cp", "-r", "d", "s3://{b}/p/"]],
  },
  {
    name: "cp -r of a missing prefix copies nothing",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "-r", "s3://{b}/nothing/", "out"]],
  },
  {
    name: "cp -r --dryrun upload prints and stores nothing",
    local: localTree("d"),
    steps: [["cp", "-r", "d", "s3://{b}/p/", "--dryrun"]],
  },
  {
    name: "cp -r --quiet download prints nothing",
    stderrEmptiness: true,
    remote: remoteTree("p/"),
    steps: [["cp", "--quiet", "-r", "s3://{b}/p/", "out"]],
  },
];
