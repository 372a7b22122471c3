// The net layer's address book, re-exported from net/pools/ for the layers above (cli, s3, engine).
export { DEFAULT_NET_OPTIONS, type NetOptions, type TlsSettings } from "./net-options.js";
export type { AddressState, AddressStats, Reachability } from "./pools/address-health.js";
export { FrontEndAddress } from "./pools/front-end-address.js";
export { HostAddresses } from "./pools/host-addresses.js";
export { HostDirectory } from "./pools/host-directory.js";

// The names these had before net/pools.ts was split, still used by
// net/raw-http.ts, net/http-handler.ts and s3/client.ts; new code uses the names above.
export { FrontEndAddress as AddressPool } from "./pools/front-end-address.js";
export { HostAddresses as HostPools } from "./pools/host-addresses.js";
export { HostDirectory as PoolManager } from "./pools/host-directory.js";
