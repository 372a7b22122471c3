// Stands in for the "undici" package inside the bundle (see scripts/bundle.mjs):
// s3x uses only undici's Pool and its connector (net/pools: first-contact
// probes), while undici's index loads fetch, WebSocket, EventSource, the cache
// and cookie code (and Node's own bundled undici) at start-up, about a third
// of the bundle's size and load time.
export { default as Pool } from "undici/lib/dispatcher/pool.js";
export { default as buildConnector } from "undici/lib/core/connect.js";
