/**
 * The inside half of the network lab (see netlab.ts): this process runs in a
 * private network namespace (`unshare -n`), so everything it starts, and
 * every tc or nft rule it sets, exists only there and vanishes with it.
 * It builds the emulated S3 fleet (radosgw on several loopback addresses,
 * a tc htb class per address, nft fault rules, a DNS server) and takes
 * orders from the test process over the Node IPC channel.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import http from "node:http";
import { CreateBucketCommand, GetObjectCommand, ListMultipartUploadsCommand, S3Client } from "@aws-sdk/client-s3";
import { startRadosgw, type RadosgwServer } from "./radosgw.js";
import { startDnsServer, type TestDnsServer } from "./dns-server.js";
import type { AgentReply, AgentRequest, Fault, LabInfo, LabSetup } from "./netlab.js";

let radosgw: RadosgwServer | undefined;
let dns: TestDnsServer | undefined;
let client: S3Client | undefined;
let setup: LabSetup | undefined;
const faults = new Map<string, { fault: Fault; afterBytes: number }>();
const proxies: http.Server[] = [];

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.error?.message ?? result.stderr.trim()}`);
}

function classId(index: number): string {
  return `1:${(index + 10).toString(16)}`;
}

/** Each address gets its own htb class (its "front-end host link"); everything else is unlimited. */
function shapeTraffic(addresses: string[], mbit: number): void {
  run("tc", ["qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "ff"]);
  run("tc", ["class", "add", "dev", "lo", "parent", "1:", "classid", "1:ff", "htb", "rate", "100gbit"]);
  addresses.forEach((address, i) => {
    run("tc", ["class", "add", "dev", "lo", "parent", "1:", "classid", classId(i), "htb", "rate", `${mbit}mbit`, "ceil", `${mbit}mbit`]);
    for (const side of ["src", "dst"]) {
      run("tc", ["filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", side, `${address}/32`, "flowid", classId(i)]);
    }
  });
}

function setRate(address: string, mbit: number): void {
  const i = setup!.addresses.indexOf(address);
  if (i < 0) throw new Error(`${address} is not a lab address`);
  run("tc", ["class", "change", "dev", "lo", "parent", "1:", "classid", classId(i), "htb", "rate", `${mbit}mbit`, "ceil", `${mbit}mbit`]);
}

/** nft rules for every current fault, rebuilt from scratch on each change. */
function applyFaults(): void {
  const port = radosgw!.port;
  const rules: string[] = [];
  for (const [address, { fault, afterBytes }] of faults) {
    const toServer = `ip daddr ${address} tcp dport ${port}`;
    const fromServer = `ip saddr ${address} tcp sport ${port}`;
    switch (fault) {
      case "refuse":
        rules.push(`${toServer} tcp flags syn reject with tcp reset`);
        break;
      case "blackhole":
        rules.push(`${toServer} drop`);
        break;
      case "stall": // both directions: a download's body and an upload's body stop mid-way
        rules.push(`${fromServer} ct reply bytes > ${afterBytes} drop`, `${toServer} ct original bytes > ${afterBytes} drop`);
        break;
      case "reset": // the client's own packets are answered with a RST
        rules.push(`${toServer} ct reply bytes > ${afterBytes} reject with tcp reset`, `${toServer} ct original bytes > ${afterBytes} reject with tcp reset`);
        break;
    }
  }
  const script = ["flush ruleset", "table inet s3xlab {", "  chain out {", "    type filter hook output priority 0; policy accept;", ...rules.map((r) => `    ${r}`), "  }", "}"].join("\n");
  const result = spawnSync("nft", ["-f", "-"], { input: script, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`nft failed: ${result.stderr}\n${script}`);
}

/**
 * An HTTP relay in front of radosgw that answers every UploadPart with a
 * real-looking 503 SlowDown and passes everything else through: "every
 * part request refused", while Create/Abort/List still work.
 */
async function startSlowDownProxy(address: string): Promise<void> {
  const target = radosgw!;
  const server = http.createServer((req, res) => {
    if (req.method === "PUT" && /[?&]partNumber=/.test(req.url ?? "")) {
      req.resume();
      req.on("end", () => {
        res.writeHead(503, { "content-type": "application/xml" });
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
      });
      return;
    }
    const upstream = http.request({ host: target.addresses[0], port: target.port, method: req.method, path: req.url, headers: req.headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(target.port, address, () => resolve()));
  proxies.push(server);
}

async function objectHash(bucket: string, key: string): Promise<string> {
  const out = await client!.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const hash = createHash("sha256");
  for await (const chunk of out.Body as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest("hex");
}

async function handle(request: AgentRequest): Promise<unknown> {
  switch (request.op) {
    case "setup": {
      setup = request.args as LabSetup;
      run("ip", ["link", "set", "lo", "up"]);
      if (setup.mbitPerAddress > 0) shapeTraffic(setup.addresses, setup.mbitPerAddress);
      dns = await startDnsServer();
      dns.setAnswer(setup.hostName, setup.dnsAnswer ?? setup.addresses, 1);
      radosgw = await startRadosgw({ addresses: setup.addresses, maxConcurrentRequests: setup.maxConcurrentRequests });
      applyFaults();
      client = new S3Client({
        endpoint: radosgw.endpoint,
        region: radosgw.region,
        forcePathStyle: true,
        credentials: { accessKeyId: radosgw.accessKeyId, secretAccessKey: radosgw.secretAccessKey },
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      });
      const info: LabInfo = { port: radosgw.port, dnsServer: dns.server, accessKeyId: radosgw.accessKeyId, secretAccessKey: radosgw.secretAccessKey, region: radosgw.region, serverPids: radosgw.pids() };
      return info;
    }
    case "setRate": {
      const { address, mbit } = request.args as { address: string; mbit: number };
      setRate(address, mbit);
      return null;
    }
    case "setFault": {
      const { address, fault, afterBytes } = request.args as { address: string; fault: Fault | null; afterBytes: number };
      if (fault) faults.set(address, { fault, afterBytes });
      else faults.delete(address);
      applyFaults();
      return null;
    }
    case "setDns": {
      const { addresses, ttl } = request.args as { addresses: string[]; ttl: number };
      dns!.setAnswer(setup!.hostName, addresses, ttl);
      return null;
    }
    case "createBucket":
      await client!.send(new CreateBucketCommand({ Bucket: (request.args as { bucket: string }).bucket }));
      return null;
    case "objectHash": {
      const { bucket, key } = request.args as { bucket: string; key: string };
      return objectHash(bucket, key);
    }
    case "openUploads": {
      const out = await client!.send(new ListMultipartUploadsCommand({ Bucket: (request.args as { bucket: string }).bucket }));
      return (out.Uploads ?? []).length;
    }
    case "startSlowDownProxy":
      await startSlowDownProxy((request.args as { address: string }).address);
      return null;
    case "shutdown":
      await shutdown();
      return null;
    default:
      throw new Error(`unknown lab operation ${request.op}`);
  }
}

async function shutdown(): Promise<void> {
  for (const proxy of proxies) proxy.close();
  client?.destroy();
  await dns?.close();
  await radosgw?.stop();
  setImmediate(() => process.exit(0));
}

process.on("message", (message: AgentRequest) => {
  handle(message).then(
    (result) => process.send?.({ id: message.id, ok: true, result } satisfies AgentReply),
    (err: unknown) => process.send?.({ id: message.id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies AgentReply),
  );
});
// The test process went away: take the fleet down with us (radosgw.ts kills its daemons on exit).
process.on("disconnect", () => void shutdown());
