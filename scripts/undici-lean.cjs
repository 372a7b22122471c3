// Stands in for the "undici" package inside the bundle (see scripts/bundle.mjs).
// s3x uses only undici's Pool (the TLS path, and S3X_HTTP_CLIENT=undici) and
// its connector (net/pools: first-contact probes). undici's index would load
// fetch, WebSocket, EventSource, the cache and cookie code at start-up, about
// a third of the bundle's size and load time; and Pool itself brings the
// HTTP/1 and HTTP/2 clients and node:http2. So each is loaded when first used:
// over plain HTTP, where every request goes over s3x's own connections, no
// Pool is ever built.
"use strict";

let PoolClass;
let connectorFactory;

class Pool {
  constructor(url, options) {
    PoolClass ??= require("undici/lib/dispatcher/pool.js");
    return new PoolClass(url, options);
  }
}

function buildConnector(options) {
  connectorFactory ??= require("undici/lib/core/connect.js");
  return connectorFactory(options);
}

exports.Pool = Pool;
exports.buildConnector = buildConnector;
