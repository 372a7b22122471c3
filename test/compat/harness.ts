/**
 * Runs one compatibility scenario through aws-cli and through s3x, side by
 * side: the same initial state twice (two pairs of buckets, two local
 * directories), the same commands in each, then a list of every way the two
 * sides ended up different: exit codes, printed lines, stored objects, local
 * files. An empty list means s3x behaved as aws-cli.
 */
import { createHash, randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { CreateBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { runS3x } from "../support/cli.js";
import type { TestS3 } from "../support/s3-server.js";
import type { AwsCli, CommandResult } from "./aws-cli.js";
import type { LocalFile, RemoteObject, Scenario } from "./scenario.js";
import { bucketState, localState, compareStates, type State } from "./state.js";

export interface CompatContext {
  s3: TestS3;
  aws: AwsCli;
}

type SideName = "aws" | "s3x";

/** One side's own buckets and directory. */
interface Side {
  name: SideName;
  buckets: { b: string; b2: string; nb: string };
  dir: string;
}

export async function runScenario(ctx: CompatContext, scenario: Scenario): Promise<string[]> {
  const [aws, s3x] = await Promise.all([prepareSide(ctx, scenario, "aws"), prepareSide(ctx, scenario, "s3x")]);
  try {
    return await runPrepared(ctx, scenario, aws, s3x);
  } finally {
    await Promise.all([aws.dir, s3x.dir].map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

async function runPrepared(ctx: CompatContext, scenario: Scenario, aws: Side, s3x: Side): Promise<string[]> {
  const mismatches: string[] = [];
  for (const [index, step] of scenario.steps.entries()) {
    const [awsRun, s3xRun] = await Promise.all([runStep(ctx, aws, step), runStep(ctx, s3x, step)]);
    const label = `step ${index + 1} (${step.join(" ")})`;
    const purpose = scenario.differsOnPurpose;
    if (purpose?.s3xExitCode !== undefined && awsRun.code !== s3xRun.code) {
      if (s3xRun.code !== purpose.s3xExitCode || awsRun.code === 0) mismatches.push(`${label}: exit code aws ${awsRun.code}, s3x ${s3xRun.code}, expected s3x ${purpose.s3xExitCode} (${purpose.reason})`);
    } else if (awsRun.code !== s3xRun.code) {
      mismatches.push(`${label}: exit code aws ${awsRun.code}, s3x ${s3xRun.code} (s3x stderr: ${oneLine(s3xRun.stderr)}; aws stderr: ${oneLine(awsRun.stderr)})`);
    }
    if (!scenario.stdoutDiffers?.steps.includes(index + 1)) {
      const awsLines = printedLines(awsRun.stdout, aws, scenario.ordered === true);
      const s3xLines = printedLines(s3xRun.stdout, s3x, scenario.ordered === true);
      if (awsLines.join("\n") !== s3xLines.join("\n")) {
        mismatches.push(`${label}: stdout differs\n    aws: ${JSON.stringify(awsLines)}\n    s3x: ${JSON.stringify(s3xLines)}`);
      }
    }
    if (scenario.stderrEmptiness && (awsRun.stderr === "") !== (s3xRun.stderr === "")) {
      mismatches.push(`${label}: stderr aws ${JSON.stringify(awsRun.stderr)}, s3x ${JSON.stringify(s3xRun.stderr)}`);
    }
  }
  for (const bucket of ["b", "b2", "nb"] as const) {
    const [awsState, s3xState] = await Promise.all([
      bucketState(ctx.s3, aws.buckets[bucket], scenario.acl === true),
      bucketState(ctx.s3, s3x.buckets[bucket], scenario.acl === true),
    ]);
    if (bucket === "b") mismatches.push(...expectContentTypes(scenario, awsState, s3xState));
    mismatches.push(...compareStates(`objects in {${bucket}}`, awsState, s3xState));
  }
  const [awsFiles, s3xFiles] = await Promise.all([localState(aws.dir), localState(s3x.dir)]);
  mismatches.push(...expectFiles(scenario, awsFiles, s3xFiles));
  mismatches.push(...compareStates("local files", awsFiles, s3xFiles));
  return mismatches;
}

async function prepareSide(ctx: CompatContext, scenario: Scenario, name: SideName): Promise<Side> {
  const bucketName = () => `cmp-${name}-${randomBytes(6).toString("hex")}`;
  const side: Side = {
    name,
    buckets: { b: bucketName(), b2: bucketName(), nb: bucketName() },
    dir: await mkdtemp(join(tmpdir(), `s3x-compat-${name}-`)),
  };
  await Promise.all([side.buckets.b, side.buckets.b2].map((Bucket) => ctx.s3.client.send(new CreateBucketCommand({ Bucket }))));
  await Promise.all([
    ...Object.entries(scenario.remote ?? {}).map(([key, obj]) => putObject(ctx.s3, side.buckets.b, key, obj)),
    ...Object.entries(scenario.local ?? {}).map(([path, file]) => writeLocal(side.dir, path, file)),
  ]);
  // After {b}'s: an S3 → S3 sync then finds {b2}'s objects as new as or newer than their sources.
  await Promise.all(Object.entries(scenario.remote2 ?? {}).map(([key, obj]) => putObject(ctx.s3, side.buckets.b2, key, obj)));
  return side;
}

async function putObject(s3: TestS3, bucket: string, key: string, obj: RemoteObject): Promise<void> {
  const spec = typeof obj === "string" || Buffer.isBuffer(obj) ? { body: obj } : obj;
  const body = Buffer.from(spec.body);
  await s3.client.send(
    new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length, ContentType: spec.contentType, Metadata: spec.metadata }),
  );
}

async function writeLocal(dir: string, path: string, file: LocalFile): Promise<void> {
  const target = join(dir, path);
  if (path.endsWith("/")) {
    await mkdir(target, { recursive: true });
    return;
  }
  await mkdir(dirname(target), { recursive: true });
  if (typeof file === "object" && "fifo" in file) {
    // Node cannot make a named pipe; mkfifo(1) is in coreutils.
    const made = spawnSync("mkfifo", [target], { encoding: "utf8" });
    if (made.status !== 0) throw new Error(`mkfifo ${target}: ${made.stderr}`);
    return;
  }
  if (typeof file === "object" && "symlinkTo" in file) {
    await symlink(file.symlinkTo, target);
    return;
  }
  const spec = typeof file === "string" || Buffer.isBuffer(file) ? { body: file, mtime: undefined } : file;
  await writeFile(target, spec.body);
  if (spec.mtime) await utimes(target, spec.mtime, spec.mtime);
}

function substitute(arg: string, side: Side): string {
  return arg
    .replaceAll("{b2}", side.buckets.b2)
    .replaceAll("{nb}", side.buckets.nb)
    .replaceAll("{b}", side.buckets.b)
    .replaceAll("{l}", side.dir);
}

async function runStep(ctx: CompatContext, side: Side, step: string[]): Promise<CommandResult> {
  const args = step.map((a) => substitute(a, side));
  if (side.name === "aws") return ctx.aws.s3(args, side.dir);
  const env = { ...ctx.s3.env, TZ: "UTC", LANG: "C.UTF-8", LC_ALL: "C.UTF-8" };
  const res = await runS3x(args, { env, cwd: side.dir });
  return { code: res.code, stdout: res.stdout.toString("utf8"), stderr: res.stderr };
}

/**
 * The lines a side printed on stdout, comparable with the other side's:
 * aws-cli's progress ("Completed 6 Bytes/6 Bytes …" ended by a carriage
 * return and overwritten by the next line) is dropped, names of this side's
 * buckets and directory become their placeholders, and listing timestamps
 * (objects were written at slightly different times) become <time>.
 */
function printedLines(stdout: string, side: Side, ordered: boolean): string[] {
  const lines = stdout
    .split("\n")
    .map((line) => (line.split("\r").at(-1) ?? "").trimEnd())
    .filter((line) => line !== "")
    .map((line) =>
      line
        .replaceAll(side.buckets.b2, "{b2}")
        .replaceAll(side.buckets.nb, "{nb}")
        .replaceAll(side.buckets.b, "{b}")
        .replaceAll(side.dir, "{l}")
        .replace(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, "<time>"),
    );
  return ordered ? lines : lines.sort();
}

function oneLine(text: string): string {
  const trimmed = text.trim().replace(/\s*\n\s*/g, " | ");
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed || "(empty)";
}

/** Checks s3x's files where it differs on purpose, then leaves them out of the side-by-side comparison. */
function expectFiles(scenario: Scenario, aws: State, s3x: State): string[] {
  const out: string[] = [];
  for (const [path, text] of Object.entries(scenario.differsOnPurpose?.s3xFiles ?? {})) {
    const body = Buffer.from(text);
    const expected = JSON.stringify({ size: body.length, sha256: createHash("sha256").update(body).digest("hex").slice(0, 16) });
    if (JSON.stringify(s3x.get(path)) !== expected) out.push(`local files: ${JSON.stringify(path)} should hold ${JSON.stringify(text)} on s3x's side (${scenario.differsOnPurpose?.reason})`);
    aws.delete(path);
    s3x.delete(path);
  }
  return out;
}

/** Checks the Content-Type s3x stores where it differs on purpose, then compares the rest of those objects. */
function expectContentTypes(scenario: Scenario, aws: State, s3x: State): string[] {
  const out: string[] = [];
  for (const [key, type] of Object.entries(scenario.differsOnPurpose?.s3xContentTypes ?? {})) {
    const object = s3x.get(key);
    if (object?.contentType !== type) out.push(`objects in {b}: ${JSON.stringify(key)} should have Content-Type ${type} on s3x's side, has ${String(object?.contentType)} (${scenario.differsOnPurpose?.reason})`);
    const awsObject = aws.get(key);
    if (object && awsObject) s3x.set(key, { ...object, contentType: awsObject.contentType });
  }
  return out;
}
