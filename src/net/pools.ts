// The net layer's address book, re-exported from net/pools/ for the layers above (cli, s3, engine).
export { DEFAULT_NET_OPTIONS, type NetOptions, type TlsSettings } from "./net-options.js";
export { SecureContexts } from "./tls-contexts.js";
export { FileTlsSessionStore, trustOf, type KeptSessionsLocation, type TlsSessionStore } from "./tls-session-store.js";
export type { AddressState, AddressStats, Reachability } from "./pools/address-health.js";
export { FrontEndAddress } from "./pools/front-end-address.js";
export { HostAddresses } from "./pools/host-addresses.js";
export { HostDirectory } from "./pools/host-directory.js";

