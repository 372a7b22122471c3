import net from "node:net";
import { signHeaders, uriEncode } from "./dist/src/s3/sigv4.js";
const creds = { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY };
function head(method, path, query) {
  const headers = { host: "127.0.0.1:7480", "x-amz-content-sha256": "UNSIGNED-PAYLOAD" };
  signHeaders(method, path, headers, creds, "us-east-1", "s3", Date.now(), query);
  const qs = Object.entries(query).map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`).join("&");
  return `${method} ${path}${qs ? "?" + qs : ""} HTTP/1.1\r\n` + Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join("\r\n") + "\r\n\r\n";
}
const s = net.connect(7480, "127.0.0.1"); s.setNoDelay(true);
await new Promise((r) => s.once("connect", r));
let t0, buf = "", events = [], done;
s.on("data", (d) => { events.push(`${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)}ms:${d.length}`); buf += d.toString("latin1"); if (buf.includes("</ListBucketResult>") && (buf.endsWith("0\r\n\r\n") || !/chunked/i.test(buf))) done(); });
for (let i = 0; i < 4; i++) {
  buf = ""; events = [];
  const h = head("GET", "/bench1", { "list-type": "2", "max-keys": "100", prefix: "small/" });
  const p = new Promise((r) => (done = r));
  t0 = process.hrtime.bigint(); s.write(h); await p;
  console.log(i, events.join(" "), buf.split("\r\n\r\n")[0].split("\r\n").filter(l=>/transfer-encoding|content-length/i.test(l)).join(","));
}
s.end();
