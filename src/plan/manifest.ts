import { scanJsonArray } from "./json-array-scan.js";
import { asDirectoryPrefix } from "./keys.js";
import { parseLocation, UsageError } from "./location.js";

/**
 * `--from FILE`: the objects to move, read from a manifest instead of a
 * listing, in the three forms training jobs already have (a list of URLs
 * or keys, SageMaker's manifest, an augmented manifest). The whole text is
 * parsed and checked before anything moves: a bad line stops the command
 * with its line number rather than after half the transfers.
 *
 * Keys are not URL-decoded: an s3:// URL carries the raw key, as in
 * aws-cli ("a%20b" is the key a%20b, "a+b" the key a+b).
 */

/** One object a manifest names. */
export interface ManifestEntry {
  bucket: string;
  key: string;
  /** Where the object lands under a destination directory or prefix (see parseManifest). */
  relativePath: string;
  /** The line (1-based) naming it, for messages. */
  line: number;
}

/** The s3:// URL given with the manifest: bare keys are relative to it, and URLs must lie under it. */
export interface ManifestBase {
  bucket: string;
  /** A prefix; "data" is taken as "data/", as a recursive source is. */
  prefix: string;
}

export interface ManifestOptions {
  base?: ManifestBase;
  /** The augmented manifest's attribute holding the URL (`--attribute`); "source-ref" when absent. */
  attribute?: string;
  /** How messages name the manifest ("manifest.txt", "stdin"). */
  name: string;
}

export type ManifestForm = "list" | "sagemaker" | "json-lines";

/**
 * A manifest that cannot be used whole. A usage error (the CLI's exit code
 * for bad input): the message is one line starting "NAME:LINE: ", or
 * "NAME: " when no line is to blame.
 */
export class ManifestError extends UsageError {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly reason: string,
  ) {
    super(`${file}${line === undefined ? "" : `:${line}`}: ${reason}`);
    this.name = "ManifestError";
  }
}

/**
 * The form, from the first non-blank character: "[" a SageMaker manifest,
 * "{" JSON Lines, anything else a list.
 */
export function manifestForm(text: string): ManifestForm {
  const first = /\S/.exec(withoutBom(text))?.[0];
  return first === "[" ? "sagemaker" : first === "{" ? "json-lines" : "list";
}

/**
 * Every object the manifest names, in its order, or a ManifestError for
 * the first problem (nothing partial: the caller moves all or nothing).
 *
 * relativePath: with a base, the key relative to the base prefix (the
 * user chose that root); else, in a SageMaker manifest, the listed string;
 * else the whole key.
 */
export function parseManifest(text: string, options: ManifestOptions): ManifestEntry[] {
  const body = withoutBom(text);
  const form = manifestForm(body);
  if (options.attribute !== undefined && form !== "json-lines") {
    throw new ManifestError(options.name, undefined, `--attribute names a field of an augmented manifest (JSON Lines), but this is ${form === "list" ? "a list" : "a SageMaker manifest"}`);
  }
  const context = new Context(options);
  const entries = form === "sagemaker" ? sageMakerEntries(body, context) : form === "json-lines" ? jsonLinesEntries(body, context) : listEntries(body, context);
  if (entries.length === 0) throw new ManifestError(options.name, undefined, "no objects listed");
  return entries;
}

/**
 * For a copy into a directory or prefix: refuses two different objects
 * that would land on the same relative path (the same key in two buckets,
 * or a key reached through two bases), since one would silently replace
 * the other. The same object listed twice is no conflict (a stream may
 * want it twice; a copy can skip the repeat).
 */
export function refuseCollisions(entries: readonly ManifestEntry[], name: string): void {
  const first = new Map<string, ManifestEntry>();
  for (const entry of entries) {
    const earlier = first.get(entry.relativePath);
    if (earlier === undefined) first.set(entry.relativePath, entry);
    else if (earlier.bucket !== entry.bucket || earlier.key !== entry.key) {
      throw new ManifestError(name, entry.line, `s3://${entry.bucket}/${entry.key} would land on ${JSON.stringify(entry.relativePath)}, as s3://${earlier.bucket}/${earlier.key} (line ${earlier.line}) does`);
    }
  }
}

/** One per line: s3:// URLs, or keys relative to the base; "#" starts a comment line. */
function listEntries(text: string, context: Context): ManifestEntry[] {
  const entries: ManifestEntry[] = [];
  lines(text).forEach((raw, i) => {
    const line = i + 1;
    const item = raw.trim();
    if (item === "" || item.startsWith("#")) return;
    if (/^s3:/i.test(item)) {
      entries.push(context.fromUrl(item, line));
    } else if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(item)) {
      context.fail(line, `${JSON.stringify(item)} is not an s3:// URL`);
    } else {
      entries.push(context.fromBareKey(item, line));
    }
  });
  return entries;
}

/** SageMaker's manifest: `[{"prefix": "s3://bucket/prefix/"}, "relative/key", ...]`, keys being prefix + string. */
function sageMakerEntries(text: string, context: Context): ManifestEntry[] {
  const scan = scanJsonArray(text);
  if (!scan.ok) context.fail(scan.line, `not valid JSON: ${scan.reason}`);
  const [head, ...rest] = scan.elements;
  const expected = 'a SageMaker manifest starts with {"prefix": "s3://bucket/prefix/"}';
  if (head === undefined) context.fail(1, `${expected}; the array is empty`);
  const prefixObject = parseJson(head.text, head.line, context);
  const prefixUrl = isObject(prefixObject) ? prefixObject.prefix : undefined;
  if (typeof prefixUrl !== "string") context.fail(head.line, expected);
  if (!/^s3:/i.test(prefixUrl)) context.fail(head.line, `"prefix" is not an s3:// URL: ${JSON.stringify(prefixUrl)}`);
  const prefix = context.location(prefixUrl, head.line);
  return rest.map((element) => {
    const relative = parseJson(element.text, element.line, context);
    if (typeof relative !== "string") context.fail(element.line, `expected a key relative to the prefix (a string), found ${element.text.length > 60 ? `${element.text.slice(0, 60)}...` : element.text}`);
    if (relative === "") context.fail(element.line, "empty key");
    return context.entry(prefix.bucket, prefix.key + relative, relative, element.line);
  });
}

/** An augmented manifest: one JSON object per line, the URL in "source-ref" (or the attribute named). */
function jsonLinesEntries(text: string, context: Context): ManifestEntry[] {
  const attribute = context.options.attribute ?? "source-ref";
  const entries: ManifestEntry[] = [];
  lines(text).forEach((raw, i) => {
    const line = i + 1;
    const item = raw.trim();
    if (item === "") return;
    const record = parseJson(item, line, context);
    if (!isObject(record)) context.fail(line, "expected a JSON object (an augmented manifest has one per line)");
    if (!Object.hasOwn(record, attribute)) {
      const hint = context.options.attribute === undefined ? "; name the attribute that holds the URL with --attribute" : "";
      context.fail(line, `no ${JSON.stringify(attribute)} attribute${hint}`);
    }
    const url = record[attribute];
    // Taken exactly as the JSON string has it: a key may end with a space.
    if (typeof url !== "string" || !/^s3:/i.test(url)) context.fail(line, `${JSON.stringify(attribute)} is not an s3:// URL: ${JSON.stringify(url)}`);
    entries.push(context.fromUrl(url, line));
  });
  return entries;
}

/** The rules every form shares: URL syntax, object keys, the base. */
class Context {
  private readonly basePrefix: string | undefined;

  constructor(readonly options: ManifestOptions) {
    this.basePrefix = options.base === undefined ? undefined : asDirectoryPrefix(options.base.prefix);
  }

  fail(line: number, reason: string): never {
    throw new ManifestError(this.options.name, line, reason);
  }

  location(url: string, line: number): { bucket: string; key: string } {
    try {
      const location = parseLocation(url);
      if (location.kind === "s3") return location;
    } catch (err) {
      if (err instanceof UsageError) this.fail(line, err.message);
      throw err;
    }
    return this.fail(line, `${JSON.stringify(url)} is not an s3:// URL`);
  }

  fromUrl(url: string, line: number): ManifestEntry {
    const { bucket, key } = this.location(url, line);
    if (key === "") this.fail(line, `${url} names no object (empty key)`);
    return this.entry(bucket, key, key, line);
  }

  fromBareKey(key: string, line: number): ManifestEntry {
    if (this.options.base === undefined || this.basePrefix === undefined) {
      return this.fail(line, `${JSON.stringify(key)}: a key needs a base s3:// URL (or write s3://bucket/${key})`);
    }
    return this.entry(this.options.base.bucket, this.basePrefix + key, key, line);
  }

  /** The entry for an object, checked against the base when there is one. */
  entry(bucket: string, key: string, relativePath: string, line: number): ManifestEntry {
    const url = `s3://${bucket}/${key}`;
    if (key.endsWith("/")) this.fail(line, `${url} ends with "/": a folder, not an object`);
    const base = this.options.base;
    if (base === undefined || this.basePrefix === undefined) return { bucket, key, relativePath, line };
    const baseUrl = `s3://${base.bucket}/${this.basePrefix}`;
    if (bucket !== base.bucket) this.fail(line, `${url} is in bucket "${bucket}", not in the base ${baseUrl}`);
    if (!key.startsWith(this.basePrefix)) this.fail(line, `${url} is not under the base ${baseUrl}`);
    return { bucket, key, relativePath: key.slice(this.basePrefix.length), line };
  }
}

function parseJson(text: string, line: number, context: Context): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    return context.fail(line, `not valid JSON (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Lines without their ending: LF, CRLF, or a lone CR (old Mac files), which
 * would otherwise end up inside a key.
 */
function lines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/** A UTF-8 byte-order mark (Windows editors write one) is not part of the first line. */
function withoutBom(text: string): string {
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}
