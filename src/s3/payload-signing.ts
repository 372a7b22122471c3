/**
 * Whether an upload body's SHA-256 goes into the SigV4 signature
 * (--payload-signing). Hashing costs ~0.6 CPU-s per GiB uploaded, a third
 * to a half of an upload's client CPU, so "auto" hashes only where nothing
 * else protects the bytes:
 *  - over TLS, never (the connection protects them: UNSIGNED-PAYLOAD);
 *  - over plain HTTP, unless the request carries a checksum the server has
 *    shown it verifies (it echoed one: engine/integrity/checksum-support):
 *    then the CRC is the end-to-end check and the SHA-256 is skipped.
 *    A CRC catches corruption, not a deliberate change on the path: that
 *    takes TLS or "always".
 * "never" sends UNSIGNED-PAYLOAD everywhere, as the CRT always does
 * (aws-cli's payload_signing_enabled = false); "always" hashes over TLS too.
 */
export type PayloadSigning = "auto" | "always" | "never";

/** Whether a data upload over `protocol` is signed with its payload hash. */
export function signsPayloadUnder(mode: PayloadSigning, protocol: string, checksumChecked: boolean): boolean {
  if (mode === "always") return true;
  if (mode === "never") return false;
  return protocol !== "https:" && !checksumChecked;
}
