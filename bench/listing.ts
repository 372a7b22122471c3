/**
 * Listing benchmark: a recursive listing of a prefix of many keys through a
 * relay that holds every chunk a while each way (test/support/throttle-proxy:
 * this kernel has no netem), so a round trip to the server costs what it
 * costs over a network. s3x lists page by page (--list-ranges 1, as every
 * other tool must: each page's token comes from the page before) and in key
 * ranges at once (its default); aws-cli and rclone run too when installed.
 * Prints wall seconds with start-up, and s3x's requests; every listing is
 * checked: every key once, in S3's order.
 *
 *   npm run bench:listing                           # 20,000 keys in 4 folders, RTT 0 / 20 / 50 ms, 3 runs
 *   npm run bench:listing -- --keys 50000 --classes 1 --rtt 0,30 --runs 5
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startThrottleProxy } from "../test/support/throttle-proxy.js";
import { arg, argText, createBucket, median, roundOrder, runBench, S3X_BIN, toolEnvironment } from "./common.js";

const BUCKET = "listing";
const PREFIX = "keys/";

interface Tool {
  name: string;
  /** The command (argv) that lists s3://BUCKET/PREFIX recursively through `endpoint`. */
  command: (endpoint: string) => string[];
  /** The keys in its output, in its order. */
  keys: (stdout: string) => string[];
  /** Points the tool at `endpoint` before it runs, for tools that read it from a file. */
  configure?: (endpoint: string) => Promise<void>;
}

interface Run {
  seconds: number;
  requests?: number;
}

function run(argv: string[], env: NodeJS.ProcessEnv): Promise<{ seconds: number; stdout: string; stderr: string }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    // Asynchronous: the relay in this process must keep relaying meanwhile.
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (status) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const stderr = Buffer.concat(err).toString();
      if (status !== 0) reject(new Error(`${argv.join(" ")} exited ${status}: ${stderr}`));
      else resolve({ seconds, stdout: Buffer.concat(out).toString(), stderr });
    });
  });
}

runBench(async (server, dir) => {
  const count = arg("keys", 20_000);
  const rtts = argText("rtt", "0,20,50").split(",").map(Number);
  const runs = arg("runs", 3);
  const classes = ["cat", "dog", "fox", "owl"].slice(0, arg("classes", 4));
  await createBucket(server, BUCKET);
  const env = {
    ...toolEnvironment(),
    AWS_ACCESS_KEY_ID: server.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
    AWS_REGION: server.region,
    AWS_DEFAULT_REGION: server.region,
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_PAGER: "",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
  // Keys as a dataset names its samples: train/<class>/<number>.jpg.
  const names: string[] = [];
  for (const cls of classes) {
    await mkdir(join(dir, "keys", "train", cls), { recursive: true });
    for (let i = 0; i < count / classes.length; i++) names.push(`train/${cls}/${String(i).padStart(7, "0")}.jpg`);
  }
  for (let i = 0; i < names.length; i += 1000) await Promise.all(names.slice(i, i + 1000).map((name) => writeFile(join(dir, "keys", name), "")));
  await run(["node", S3X_BIN, "cp", "--recursive", join(dir, "keys"), `s3://${BUCKET}/${PREFIX}`, "--quiet", "--no-progress", "--endpoint-url", server.endpoint], env);
  const expected = names.map((name) => PREFIX + name).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

  const s3xKeys = (stdout: string) => stdout.trim().split("\n").map((line) => (JSON.parse(line) as { key: string }).key);
  const tools: Tool[] = [
    { name: "s3x, page by page (--list-ranges 1)", command: (ep) => ["node", S3X_BIN, "ls", "-r", "--json", "--debug", "--list-ranges", "1", `s3://${BUCKET}/${PREFIX}`, "--endpoint-url", ep], keys: s3xKeys },
    { name: "**s3x** (key ranges)", command: (ep) => ["node", S3X_BIN, "ls", "-r", "--json", "--debug", `s3://${BUCKET}/${PREFIX}`, "--endpoint-url", ep], keys: s3xKeys },
  ];
  if (existsSync("/usr/bin/aws")) {
    tools.push({ name: "aws-cli", command: (ep) => ["/usr/bin/aws", "--endpoint-url", ep, "s3", "ls", "--recursive", `s3://${BUCKET}/${PREFIX}`], keys: (out) => out.trim().split("\n").map((l) => l.slice(31)) });
  }
  if (existsSync("/usr/bin/rclone")) {
    const config = join(dir, "rclone.conf");
    const remote = (ep: string) => `[s3]\ntype = s3\nprovider = Ceph\naccess_key_id = ${server.accessKeyId}\nsecret_access_key = ${server.secretAccessKey}\nendpoint = ${ep}\nregion = ${server.region}\n`;
    tools.push({
      name: "rclone",
      command: () => ["/usr/bin/rclone", "--config", config, "lsf", "-R", "--files-only", `s3:${BUCKET}/${PREFIX}`],
      keys: (out) => out.trim().split("\n").map((l) => PREFIX + l),
      configure: (ep) => writeFile(config, remote(ep)),
    });
  }

  const proxy = await startThrottleProxy(server.addresses[0]!, server.port);
  const lines = [`| RTT | ${tools.map((t) => t.name).join(" | ")} |`, `|---|${tools.map(() => "---|").join("")}`];
  try {
    for (const rtt of rtts) {
      proxy.setDelay(rtt / 2);
      const results = tools.map((): Run[] => []);
      for (let r = 0; r < runs; r++) {
        // Interleaved, in a new order each round, so every tool sees the same machine and no tool always follows the same one (common.ts, roundOrder).
        for (const { i } of roundOrder(tools.map((tool, i) => ({ id: tool.name, i })), `rtt ${rtt}`, r)) {
          const tool = tools[i]!;
          await tool.configure?.(proxy.endpoint);
          const out = await run(tool.command(proxy.endpoint), env);
          const keys = tool.keys(out.stdout);
          if (keys.length !== expected.length || keys.some((key, j) => key !== expected[j])) throw new Error(`${tool.name} listed ${keys.length} keys, not the ${expected.length} expected in order`);
          // s3x --debug ends with each address's counters: "… N requests, …".
          const requests = [...out.stderr.matchAll(/: (\d+) requests, /g)].map((m) => Number(m[1]));
          results[i]!.push({ seconds: out.seconds, requests: requests.length > 0 ? requests[requests.length - 1] : undefined });
        }
      }
      const cells = results.map((samples) => {
        const seconds = median(samples.map((s) => s.seconds));
        const requests = samples[0]?.requests === undefined ? "" : `, ${median(samples.map((s) => s.requests!))} requests`;
        return `${seconds.toFixed(2)} s${requests}`;
      });
      lines.push(`| ${rtt} ms | ${cells.join(" | ")} |`);
      process.stderr.write(`${lines[lines.length - 1]}\n`);
    }
  } finally {
    await proxy.close();
  }
  console.log(lines.join("\n"));
  console.log(`\n${count.toLocaleString("en")} keys (train/{${classes.join(",")}}/NNNNNNN.jpg, ${count / classes.length / 1000} pages each), median of ${runs} interleaved runs, wall seconds with start-up; every listing checked (every key once, in S3's order).`);
});
