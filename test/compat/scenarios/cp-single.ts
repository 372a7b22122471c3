/** cp of one object, in every direction, with the options that set what is stored. */
import type { Scenario } from "../scenario.js";

/** Why s3x's Content-Types differ from aws-cli's (README: Differences from aws-cli). */
const CONTENT_TYPE_REASON = "s3x always sends a Content-Type: guessed by the mime-types database (gzip files as application/gzip), else application/octet-stream; aws-cli sends none when Python guesses none (the server then stores binary/octet-stream)";

export const cpSingle: Scenario[] = [
  {
    name: "cp file → S3 key",
    local: { "f.txt": "hello\n" },
    steps: [["cp", "f.txt", "s3://{b}/k/f-renamed.txt"]],
  },
  {
    name: "cp file → S3 prefix ending in /",
    local: { "f.txt": "hello\n" },
    steps: [["cp", "./f.txt", "s3://{b}/dir/"]],
  },
  {
    name: "cp file (absolute path) → bucket root without /",
    local: { "d/f.json": '{"a":1}\n' },
    steps: [["cp", "{l}/d/f.json", "s3://{b}"]],
  },
  {
    name: "cp empty file → S3",
    local: { "empty.dat": "" },
    steps: [["cp", "empty.dat", "s3://{b}/e/"]],
    differsOnPurpose: { reason: CONTENT_TYPE_REASON, s3xContentTypes: { "e/empty.dat": "application/octet-stream" } },
  },
  {
    name: "cp S3 → file",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "s3://{b}/p/a.txt", "out.txt"]],
  },
  {
    name: "cp S3 → existing local directory (no trailing /)",
    local: { "d/": "" },
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "s3://{b}/p/a.txt", "d"]],
  },
  {
    name: "cp S3 → new local directory ending in /",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "s3://{b}/p/a.txt", "new/dir/"]],
  },
  {
    name: "cp S3 key with space and unicode → file",
    remote: { "p/ünï cødé.txt": "unicode\n" },
    steps: [["cp", "s3://{b}/p/ünï cødé.txt", "./"]],
  },
  {
    name: "cp S3 → stdout (-)",
    remote: { "p/a.txt": "alpha\nbeta\n" },
    steps: [["cp", "s3://{b}/p/a.txt", "-"]],
  },
  {
    name: "cp S3 → S3 key in another bucket",
    remote: { "p/a.txt": { body: "alpha\n", contentType: "text/x-alpha", metadata: { origin: "setup" } } },
    steps: [["cp", "s3://{b}/p/a.txt", "s3://{b2}/copy/a2.txt"]],
  },
  {
    name: "cp S3 → S3 prefix ending in /",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "s3://{b}/p/a.txt", "s3://{b}/q/"]],
  },
  {
    name: "cp of a missing object fails with exit 1 and writes nothing",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "s3://{b}/p/missing.txt", "out.txt"]],
  },
  {
    name: "cp of a missing local file",
    steps: [["cp", "missing.txt", "s3://{b}/k"]],
    differsOnPurpose: { reason: "exit codes: s3x exits 1 when a transfer fails, its source missing included (README: Exit codes); aws-cli exits 255", s3xExitCode: 1 },
  },
  {
    name: "cp to a missing bucket fails",
    local: { "f.txt": "hello\n" },
    steps: [["cp", "f.txt", "s3://{nb}/k"]],
  },
  {
    name: "cp --dryrun file → S3 prints and stores nothing",
    local: { "f.txt": "hello\n" },
    steps: [["cp", "--dryrun", "f.txt", "s3://{b}/k.txt"]],
  },
  {
    name: "cp --dryrun S3 → file prints and writes nothing",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "s3://{b}/p/a.txt", "out.txt", "--dryrun"]],
  },
  {
    name: "cp --dryrun S3 → S3 prints and copies nothing",
    remote: { "p/a.txt": "alpha\n" },
    steps: [["cp", "s3://{b}/p/a.txt", "s3://{b}/q/a.txt", "--dryrun"]],
  },
  {
    name: "cp --content-type and --metadata on upload",
    local: { "f.bin": "not really binary\n" },
    steps: [["cp", "f.bin", "s3://{b}/k.bin", "--content-type", "application/x-custom", "--metadata", "team=ml,run=42"]],
  },
  {
    name: "cp --cache-control on upload",
    local: { "page.html": "<p>hi</p>\n" },
    steps: [["cp", "page.html", "s3://{b}/site/", "--cache-control", "max-age=3600, public"]],
  },
  {
    name: "cp --acl public-read on upload",
    acl: true,
    local: { "f.txt": "hello\n" },
    steps: [["cp", "--acl", "public-read", "f.txt", "s3://{b}/public/f.txt"]],
  },
  {
    name: "cp guesses Content-Type from the file name",
    local: {
      "t/a.txt": "x",
      "t/b.json": "{}",
      "t/c.html": "<p/>",
      "t/d.csv": "a,b",
      "t/e.png": "png",
      "t/f.gz": "gz",
      "t/g.tar.gz": "tgz",
      "t/h.parquet": "pq",
      "t/noext": "n",
    },
    steps: [["cp", "--recursive", "t", "s3://{b}/types/"]],
    differsOnPurpose: {
      reason: CONTENT_TYPE_REASON,
      s3xContentTypes: { "types/f.gz": "application/gzip", "types/g.tar.gz": "application/gzip", "types/h.parquet": "application/octet-stream", "types/noext": "application/octet-stream" },
    },
  },
  {
    name: "cp --quiet prints nothing",
    stderrEmptiness: true,
    local: { "f.txt": "hello\n" },
    steps: [["cp", "f.txt", "s3://{b}/q.txt", "--quiet"]],
  },
  {
    name: "cp --only-show-errors: a success prints nothing",
    stderrEmptiness: true,
    local: { "f.txt": "hello\n" },
    steps: [["cp", "--only-show-errors", "f.txt", "s3://{b}/q.txt"]],
  },
  {
    name: "cp --only-show-errors: a missing object still fails with exit 1",
    steps: [["cp", "s3://{b}/nothing-here", "out", "--only-show-errors"]],
  },
];
