import { uriEncode } from "./sigv4.js";

/**
 * Where an S3 request goes, computed from the run's settings and the
 * bucket, never learnt from an earlier request: scheme, host, port, the
 * path (bucket and key encoded) and the region it is signed for.
 *
 * The rules are the SDK's and aws-cli's for the cases s3x supports:
 *  - a custom endpoint (--endpoint-url) is addressed path-style
 *    (`https://host/bucket/key`) unless path-style is turned off;
 *  - AWS is addressed virtual-hosted (`https://bucket.s3.REGION.amazonaws.com/key`)
 *    when the bucket name is a DNS label S3 accepts there, else path-style
 *    (`https://s3.REGION.amazonaws.com/bucket/key`); a bucket with dots is
 *    path-style over https, as its name cannot match the wildcard certificate;
 *  - Transfer Acceleration uses `bucket.s3-accelerate.amazonaws.com`;
 *  - China's regions (cn-*) live under amazonaws.com.cn.
 */
export interface EndpointSettings {
  /** The run's region; a bucket's own region (learnt from a redirect) replaces it per request. */
  region: string;
  /** --endpoint-url, resolved; undefined for AWS. */
  endpointUrl?: string;
  /** Path-style addressing (default: on for custom endpoints, off for AWS). */
  forcePathStyle: boolean;
  /** S3 Transfer Acceleration (AWS only). */
  accelerate?: boolean;
}

export interface Route {
  protocol: "http:" | "https:";
  hostname: string;
  /** Undefined: the scheme's default. */
  port?: number;
  /** The Host header: hostname, and the port when not the scheme's default. */
  host: string;
  /** The encoded path: base path, bucket (path-style) and key. */
  path: string;
}

/** A custom endpoint's URL, parsed once per connection (routeOf runs for every request). */
interface CustomEndpoint {
  protocol: "http:" | "https:";
  hostname: string;
  port?: number;
  /** The URL's path without its trailing "/" ("" for none). */
  base: string;
}

/** The settings with the custom endpoint's URL parsed: what routeOf takes. */
export interface Endpoint extends EndpointSettings {
  custom?: CustomEndpoint;
}

export function endpointOf(settings: EndpointSettings): Endpoint {
  if (settings.endpointUrl === undefined) return settings;
  const url = new URL(settings.endpointUrl);
  const custom: CustomEndpoint = { protocol: url.protocol === "http:" ? "http:" : "https:", hostname: url.hostname, port: url.port === "" ? undefined : Number(url.port), base: url.pathname.replace(/\/+$/, "") };
  return { ...settings, custom };
}

/** The route of a request for `bucket` (and `key`), signed for `region`. */
export function routeOf(endpoint: Endpoint, region: string, bucket?: string, key?: string): Route {
  const keyPath = key === undefined ? "" : encodeKey(key);
  if (endpoint.custom !== undefined) {
    const { protocol, hostname, port, base } = endpoint.custom;
    if (bucket === undefined) return route(protocol, hostname, port, `${base}/`);
    if (endpoint.forcePathStyle || !virtualHostable(bucket, protocol)) return route(protocol, hostname, port, `${base}/${bucket}/${keyPath}`);
    return route(protocol, `${bucket}.${hostname}`, port, `${base}/${keyPath}`);
  }
  const domain = region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com";
  const regional = `s3.${region}.${domain}`;
  if (bucket === undefined) return route("https:", regional, undefined, "/");
  const hostable = virtualHostable(bucket, "https:");
  if (endpoint.accelerate && hostable) return route("https:", `${bucket}.s3-accelerate.${domain}`, undefined, `/${keyPath}`);
  if (endpoint.forcePathStyle || !hostable) return route("https:", regional, undefined, `/${bucket}/${keyPath}`);
  return route("https:", `${bucket}.${regional}`, undefined, `/${keyPath}`);
}

function route(protocol: "http:" | "https:", hostname: string, port: number | undefined, path: string): Route {
  const defaultPort = port === undefined || (protocol === "https:" && port === 443) || (protocol === "http:" && port === 80);
  return { protocol, hostname, port: defaultPort ? undefined : port, host: defaultPort ? hostname : `${hostname}:${port}`, path };
}

/**
 * Whether a bucket can be addressed as a host name label: 3–63 lower-case
 * letters, digits, hyphens (and dots over plain HTTP), starting and ending
 * with a letter or digit, not an IP address.
 */
export function virtualHostable(bucket: string, protocol: string): boolean {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes("..") || /^\d+\.\d+\.\d+\.\d+$/.test(bucket)) return false;
  return protocol === "http:" || !bucket.includes(".");
}

/** A key made only of characters that stay as they are in a path (RFC 3986 unreserved, and "/"). */
const PLAIN_KEY = /^[A-Za-z0-9\-._~/]*$/;

/**
 * An S3 key in a URL path as the SDK writes it: every "/"-separated segment
 * percent-encoded like encodeURIComponent, plus !'()* (RFC 3986 reserved).
 */
export function encodeKey(key: string): string {
  // Most keys need no encoding at all: skip the split, encode and join.
  if (PLAIN_KEY.test(key)) return key;
  return key.split("/").map(uriEncode).join("/");
}
