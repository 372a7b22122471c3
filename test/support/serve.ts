/**
 * Runs a throw-away radosgw S3 server (see radosgw.ts) as its own process, for
 * benchmarks and for poking at by hand:
 *
 *   node dist/test/support/serve.js [--addresses 127.0.0.1,127.0.0.2] [--port N]
 *        [--extra-ports 80] [--max-concurrent-requests N]
 *
 * Once the server answers S3 it prints ONE JSON line to stdout:
 *   {"endpoint":…,"port":…,"addresses":[…],"accessKeyId":…,"secretAccessKey":…,"region":…,"pids":[…]}
 * Progress and errors go to stderr. It stays up until SIGINT/SIGTERM/SIGHUP or
 * until its stdin closes, then stops the server and exits 0 (1 if start-up
 * failed, 2 on bad arguments).
 *
 * Stdin closing is the shutdown signal a parent process cannot forget: when
 * the parent dies, the pipe closes. A consequence: stdin must be a pipe or a
 * terminal, not /dev/null (keep it open with e.g. `sleep infinity | node …`).
 */
import { ensureRadosgwInstalled, startRadosgw, type RadosgwOptions, type RadosgwServer } from './radosgw.js';

const USAGE =
  'usage: serve.js [--addresses A,B,…] [--port N] [--extra-ports N,M,…] [--max-concurrent-requests N]';

const FLAGS = ['--addresses', '--port', '--extra-ports', '--max-concurrent-requests'];

function fail(message: string): never {
  process.stderr.write(`serve: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parsePort(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 65535) fail(`${flag}: not a port number: ${text}`);
  return n;
}

function list(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function parseArgs(argv: string[]): RadosgwOptions {
  const options: RadosgwOptions = {};
  for (let i = 0; i < argv.length; i++) {
    // Accept both "--flag value" and "--flag=value".
    let [flag, value] = argv[i].split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (!FLAGS.includes(flag)) fail(`unknown argument: ${argv[i]}`);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) fail(`${flag} needs a value`);
    }
    switch (flag) {
      case '--addresses':
        options.addresses = list(value);
        if (options.addresses.length === 0) fail('--addresses: empty list');
        break;
      case '--port':
        options.port = parsePort(flag, value);
        break;
      case '--extra-ports':
        options.extraPorts = list(value).map((p) => parsePort(flag, p));
        break;
      case '--max-concurrent-requests': {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1) fail(`${flag}: not a positive integer: ${value}`);
        options.maxConcurrentRequests = n;
        break;
      }
    }
  }
  return options;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const log = (line: string) => process.stderr.write(`${line}\n`);

  let server: RadosgwServer | undefined;
  let stopRequested = false;
  let stopping = false;

  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await server?.stop();
    process.exit(0);
  };
  const requestStop = () => {
    if (server) {
      void shutdown();
    } else if (stopRequested) {
      // A second signal while still starting: give up now. The 'exit' handler
      // in radosgw.ts kills whatever was started.
      process.exit(130);
    } else {
      stopRequested = true; // stop as soon as start-up finishes
    }
  };

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, requestStop);
  // Reading stdin (and discarding it) is what lets us notice it closing; the
  // open stdin also keeps the event loop, hence the process, alive.
  process.stdin.on('data', () => {});
  process.stdin.on('end', requestStop);
  process.stdin.on('close', requestStop);
  process.stdin.on('error', requestStop);

  try {
    ensureRadosgwInstalled(log);
    server = await startRadosgw({ ...options, log });
  } catch (error) {
    process.stderr.write(`serve: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }

  const { endpoint, port, addresses, accessKeyId, secretAccessKey, region } = server;
  process.stdout.write(
    `${JSON.stringify({ endpoint, port, addresses, accessKeyId, secretAccessKey, region, pids: server.pids() })}\n`,
  );
  if (stopRequested) await shutdown();
}

await main();
