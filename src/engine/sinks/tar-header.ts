/**
 * The tar framing of `s3x cat --tar`: a POSIX ustar header before each
 * object's bytes, zero padding to the next 512-byte block after them, and two
 * zero blocks at the end of the archive. A name that does not fit ustar's
 * 100-byte field (or is not plain ASCII) and a size over ustar's 8 GiB go in
 * a pax extended header ('x') before the entry, as POSIX.1-2001 says: GNU
 * tar, bsdtar, Python's tarfile (and so WebDataset) read it.
 *
 * Written here rather than with tar-stream: its header encoder is not part
 * of its exported API, and its pack stream would put a stream hop between
 * the ordered writer and stdout for every buffer of every object.
 */

export const TAR_BLOCK = 512;

/** What a tar entry says about one object. */
export interface TarEntry {
  /** The member's name (the object's key). */
  name: string;
  size: number;
  mtimeMs: number;
}

/** ustar's size field holds 11 octal digits: up to 8 GiB − 1. */
const MAX_USTAR_SIZE = 0o77777777777;
const NAME_FIELD = 100;

/** The header block(s) that go before an entry's bytes: a pax header when needed, then the ustar header. */
export function tarEntryHeader(entry: TarEntry): Buffer {
  const nameBytes = Buffer.from(entry.name, "utf8");
  const plainName = nameBytes.length <= NAME_FIELD && /^[\x20-\x7e]*$/.test(entry.name);
  const bigSize = entry.size > MAX_USTAR_SIZE;
  const mtime = Math.max(0, Math.floor(entry.mtimeMs / 1000));
  const header = ustarBlock(plainName ? entry.name : fallbackName(entry.name), bigSize ? 0 : entry.size, mtime, "0");
  if (plainName && !bigSize) return header;
  const records: string[] = [];
  if (!plainName) records.push(paxRecord("path", entry.name));
  if (bigSize) records.push(paxRecord("size", String(entry.size)));
  const body = Buffer.from(records.join(""), "utf8");
  const paxHeader = ustarBlock(fallbackName(`PaxHeader/${entry.name}`), body.length, mtime, "x");
  return Buffer.concat([paxHeader, body, Buffer.alloc(tarPaddingLength(body.length)), header]);
}

/** Zero bytes that bring an entry of `size` bytes to a whole block. */
export function tarPaddingLength(size: number): number {
  return (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK;
}

/** The end of an archive: two zero blocks. */
export function tarEnd(): Buffer {
  return Buffer.alloc(2 * TAR_BLOCK);
}

/** One pax record, "LEN key=value\n", LEN counting the whole record including its own digits. */
function paxRecord(key: string, value: string): string {
  const payload = ` ${key}=${value}\n`;
  const payloadLength = Buffer.byteLength(payload, "utf8");
  let length = payloadLength + String(payloadLength).length;
  if (String(length).length + payloadLength !== length) length = payloadLength + String(length).length;
  return `${length}${payload}`;
}

/** What readers without pax support see: the name's last 100 bytes of ASCII (pax readers take the path record instead). */
function fallbackName(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, "_");
  return ascii.length <= NAME_FIELD ? ascii : ascii.slice(ascii.length - NAME_FIELD);
}

function ustarBlock(name: string, size: number, mtime: number, type: "0" | "x"): Buffer {
  const block = Buffer.alloc(TAR_BLOCK);
  block.write(name, 0, NAME_FIELD, "ascii");
  writeOctal(block, 100, 8, 0o644);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, mtime);
  block.write(type, 156, 1, "ascii");
  block.write("ustar\0", 257, 6, "ascii");
  block.write("00", 263, 2, "ascii");
  // The checksum is the sum of the header's bytes with its own field read as spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return block;
}

/** An octal number in a field of `width` bytes: digits, then a NUL. */
function writeOctal(block: Buffer, offset: number, width: number, value: number): void {
  block.write(`${value.toString(8).padStart(width - 1, "0")}\0`, offset, width, "ascii");
}

/**
 * What ends a tar stream that failed, in place of the end of the archive:
 * a pax extended header saying why, then a block no reader takes for a
 * header (its checksum is wrong). Python's tarfile raises on a bad header
 * after a pax header (in any mode, ignore_zeros too), GNU tar and bsdtar
 * report a damaged archive and exit non-zero; a stream that merely stopped
 * at an entry's end would read as a complete archive to all of them.
 */
export function tarFailureMark(reason: string): Buffer {
  const body = Buffer.from(paxRecord("comment", `s3x: this stream is incomplete: ${reason.replace(/\n/g, " ")}`), "utf8");
  const paxHeader = ustarBlock("s3x-stream-failed", body.length, Math.floor(Date.now() / 1000), "x");
  const broken = Buffer.alloc(TAR_BLOCK);
  broken.write("s3x: this tar stream failed here; the archive is incomplete\n", 0, "ascii");
  // A checksum field of digits that cannot match the block's sum: every reader rejects the block.
  broken.write("0000000\0", 148, 8, "ascii");
  broken.write("ustar\0", 257, 6, "ascii");
  return Buffer.concat([paxHeader, body, Buffer.alloc(tarPaddingLength(body.length)), broken]);
}
