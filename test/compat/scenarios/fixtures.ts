/** Initial states shared by several scenarios: the same tree as local files and as objects. */
import type { LocalFile, RemoteObject } from "../scenario.js";

/** 1,000 bytes that are the same on both sides and not text. */
const BINARY = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 37) % 256));

/** Relative path → content: nested directories, an empty file, a space and non-ASCII characters in names. */
export const TREE: Record<string, string | Buffer> = {
  "a.txt": "alpha\n",
  "b.bin": BINARY,
  "empty.txt": "",
  "sub/c.txt": "gamma\n",
  "sub/deeper/d.json": '{"d":1}\n',
  "with space.txt": "space\n",
  "ünïcødé-日本.txt": "unicode\n",
};

/** TREE under a local directory. */
export function localTree(dir: string): Record<string, LocalFile> {
  return Object.fromEntries(Object.entries(TREE).map(([path, body]) => [`${dir}/${path}`, body]));
}

/** TREE under a key prefix (ending in "/", or "" for the bucket's root). */
export function remoteTree(prefix: string): Record<string, RemoteObject> {
  return Object.fromEntries(Object.entries(TREE).map(([path, body]) => [`${prefix}${path}`, body]));
}

/** An mtime well before any object's LastModified, and one well after. */
export const PAST = new Date("2020-01-02T03:04:05Z");
export const FUTURE = new Date(Date.now() + 2 * 24 * 3600 * 1000);
