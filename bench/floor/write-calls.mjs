// What writing 1 GiB costs through Node's thread pool against blocking calls
// on the main thread, in calls of one size, IN_FLIGHT at a time through the pool.
//
//   node bench/floor/write-calls.mjs async|sync CALL_BYTES [FILE]   (FILE: /dev/null by default)
//   IN_FLIGHT=1 (default) is how FileSink writes one file: one call at a time.
//
// Prints the process's CPU (every thread) and the main thread's own (/proc, in clock ticks).
import { open } from "node:fs/promises";
import { openSync, closeSync, readFileSync, writeSync } from "node:fs";

const [mode, callBytes, path] = [process.argv[2], Number(process.argv[3]), process.argv[4] ?? "/dev/null"];
const buffer = Buffer.alloc(callBytes, 1);
const calls = Math.floor(2 ** 30 / callBytes);
const inFlight = Number(process.env.IN_FLIGHT ?? 1);
const started = performance.now();
if (mode === "async") {
  const handle = await open(path, "w");
  const pending = [];
  for (let i = 0; i < calls; i++) {
    pending.push(handle.write(buffer, 0, callBytes, i * callBytes));
    if (pending.length >= inFlight) await pending.shift();
  }
  await Promise.all(pending);
  await handle.close();
} else {
  const fd = openSync(path, "w");
  for (let i = 0; i < calls; i++) writeSync(fd, buffer, 0, callBytes, i * callBytes);
  closeSync(fd);
}
const cpu = process.cpuUsage();
const fields = readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1].split(" ");
console.log(
  `${mode} ${calls} × ${callBytes} B: ${(performance.now() - started).toFixed(0)} ms, process user ${(cpu.user / 1e3).toFixed(0)} ms system ${(cpu.system / 1e3).toFixed(0)} ms, main thread ${Number(fields[11]) + Number(fields[12])} ticks`,
);
