/**
 * What a recursive command leaves out, and rm of a folder marker: filters
 * given as absolute paths, files that are not regular files (a named pipe, a
 * dangling symlink), and the one key `rm s3://b/folder/` names.
 */
import type { Scenario } from "../scenario.js";
import { localTree } from "./fixtures.js";

/** Why s3x's exit code differs from aws-cli's for skipped files (README: Exit codes). */
const SKIPPED_EXIT_REASON = "s3x exits 3 when files were skipped with a warning and none failed; aws-cli exits 2, which s3x keeps for usage errors";

export const skipsAndFiltersScenarios: Scenario[] = [
  {
    name: "sync download --delete keeps a local file excluded by its absolute path",
    local: { "out/keep.txt": "keep\n", "out/gone.txt": "gone\n" },
    remote: { "p/a.txt": "alpha\n" },
    steps: [["sync", "s3://{b}/p/", "{l}/out", "--delete", "--exclude", "{l}/out/keep.txt"]],
  },
  {
    name: "sync upload --delete with an absolute --exclude: the file is not uploaded, and its key (which the pattern does not name) is deleted",
    local: { "d/a.txt": "alpha\n", "d/skip.txt": "skip\n" },
    remote: { "p/skip.txt": "old\n", "p/gone.txt": "gone\n" },
    steps: [["sync", "d", "s3://{b}/p/", "--delete", "--exclude", "{l}/d/skip.txt"]],
  },
  {
    name: "cp --recursive upload with an absolute --exclude skips the subtree",
    local: localTree("src"),
    steps: [["cp", "--recursive", "src", "s3://{b}/x/", "--exclude", "{l}/src/sub/*"]],
  },
  {
    name: "cp --recursive upload: --exclude * then an absolute --include",
    local: localTree("src"),
    steps: [["cp", "--recursive", "./src/", "s3://{b}/x/", "--exclude", "*", "--include", "{l}/src/sub/*"]],
  },
  {
    name: "cp --recursive download: an absolute pattern never matches a key",
    remote: { "p/a.txt": "alpha\n", "p/sub/b.txt": "beta\n" },
    steps: [["cp", "--recursive", "s3://{b}/p/", "out", "--exclude", "/p/a.txt", "--exclude", "{l}/out/sub/*"]],
  },
  {
    name: "cp --recursive upload skips a named pipe with a warning",
    local: { "d/a.txt": "alpha\n", "d/pipe": { fifo: true } },
    steps: [["cp", "--recursive", "d", "s3://{b}/p/"]],
    differsOnPurpose: { reason: SKIPPED_EXIT_REASON, s3xExitCode: 3 },
  },
  {
    name: "cp --recursive upload skips a dangling symlink with a warning",
    local: { "d/a.txt": "alpha\n", "d/sub/broken": { symlinkTo: "nowhere" } },
    steps: [["cp", "--recursive", "d", "s3://{b}/p/"]],
    differsOnPurpose: { reason: SKIPPED_EXIT_REASON, s3xExitCode: 3 },
  },
  {
    name: "sync upload skips a named pipe and a dangling symlink, and copies the rest",
    local: { "d/a.txt": "alpha\n", "d/pipe": { fifo: true }, "d/broken": { symlinkTo: "nowhere" }, "d/sub/c.txt": "gamma\n" },
    steps: [["sync", "d", "s3://{b}/p/"]],
    differsOnPurpose: { reason: SKIPPED_EXIT_REASON, s3xExitCode: 3 },
  },
  {
    name: "cp --recursive upload --no-follow-symlinks skips a dangling symlink silently",
    local: { "d/a.txt": "alpha\n", "d/broken": { symlinkTo: "nowhere" } },
    steps: [["cp", "--recursive", "--no-follow-symlinks", "d", "s3://{b}/p/"]],
  },
  {
    name: "rm of a folder marker deletes that one key",
    remote: { "p/folder/": "", "p/folder/x.txt": "x\n", "p/other.txt": "other\n" },
    steps: [["rm", "s3://{b}/p/folder/"]],
  },
  {
    name: "rm --dryrun of a folder marker prints and deletes nothing",
    remote: { "p/folder/": "", "p/folder/x.txt": "x\n" },
    steps: [["rm", "--dryrun", "s3://{b}/p/folder/"]],
  },
];
