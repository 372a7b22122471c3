/** ls at every level and its exit codes; mb and rb. */
import type { Scenario } from "../scenario.js";
import { remoteTree } from "./fixtures.js";

const LISTED = { ...remoteTree("p/"), "top.txt": "top\n", "p/marker/": "", "q/x.txt": "x\n" };

export const lsBucketScenarios: Scenario[] = [
  {
    name: "ls bucket",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}"]],
  },
  {
    name: "ls bucket/ (trailing /)",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}/"]],
  },
  {
    name: "ls prefix/",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}/p/"]],
  },
  {
    name: "ls prefix without / lists the common prefix",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}/p"]],
  },
  {
    name: "ls partial key name",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}/p/wit"]],
  },
  {
    name: "ls --recursive prefix",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "--recursive", "s3://{b}/p/"]],
  },
  {
    name: "ls --recursive --human-readable --summarize bucket",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}", "--recursive", "--human-readable", "--summarize"]],
  },
  {
    name: "ls of a missing prefix exits 1 and prints nothing",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}/nothing/"]],
  },
  {
    name: "ls --recursive of a missing prefix exits 1",
    ordered: true,
    remote: LISTED,
    steps: [["ls", "s3://{b}/nothing", "--recursive"]],
  },
  {
    name: "ls of an empty bucket",
    ordered: true,
    steps: [["ls", "s3://{b}"]],
  },
  {
    name: "mb makes a bucket",
    steps: [["mb", "s3://{nb}"]],
  },
  {
    name: "mb of a bucket that exists",
    steps: [["mb", "s3://{b}"]],
  },
  {
    name: "rb removes an empty bucket",
    steps: [["rb", "s3://{b2}"]],
  },
  {
    name: "rb of a bucket with objects fails and keeps them",
    remote2: { "x.txt": "x\n" },
    steps: [["rb", "s3://{b2}"]],
  },
  {
    name: "rb --force deletes the objects, then the bucket",
    remote2: { "x.txt": "x\n", "d/y.txt": "y\n", "d/": "" },
    steps: [["rb", "--force", "s3://{b2}"]],
  },
  {
    name: "rb of a missing bucket",
    steps: [["rb", "s3://{nb}"]],
  },
];
