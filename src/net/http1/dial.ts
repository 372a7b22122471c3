import { connect, isIP, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { FrontEndAddress } from "../pools.js";
import { adoptReads, tlsSummary, type SocketReader } from "../tls-dial.js";

/** A new connection's socket, and what the connection must know of how it came. */
export interface OpenedSocket {
  socket: Socket;
  /** A probe's socket, connected already. */
  connected: boolean;
  /** Over TLS, it offers a session with no CA: a failed handshake is dialled again with them (`redialWithCa`). */
  withoutCa: boolean;
}

/**
 * The socket of a new connection to `address`: the probe's `spare` if there
 * is one (over TLS), else a new one. Either way each read (over TLS, each
 * decrypted record) lands where `reader.nextBuffer` says (`onread`).
 */
export function openSocket(address: FrontEndAddress, port: number, reader: SocketReader, spare: Socket | undefined): OpenedSocket {
  const host = address.address;
  const tls = address.tls;
  if (tls && spare && adoptReads(spare, reader)) return { socket: spare, connected: true, withoutCa: false };
  if (tls) return { ...tls.connect(host, port, reader), connected: false };
  const socket = connect({
    host,
    port,
    family: isIP(host) || undefined,
    noDelay: true,
    onread: { buffer: () => reader.nextBuffer(), callback: (n: number, buf: Uint8Array) => reader.onRead(n, buf) },
  });
  return { socket, connected: false, withoutCa: false };
}

/** Closes the socket whose handshake without CA failed (silently: its connection has moved on) and dials it again with the CAs. */
export function redialWithCa(failed: Socket, address: FrontEndAddress, port: number, reader: SocketReader): Socket {
  failed.removeAllListeners();
  failed.on("error", () => undefined);
  failed.destroy();
  return address.tls!.dialWithCa(address.address, port, reader);
}

/** For --debug: that a TLS connection is s3x's own client's, and how its handshake went. */
export function tlsConnectionLine(address: FrontEndAddress, port: number, socket: Socket): string {
  return `${address.address}:${port}: TLS connection of s3x's HTTP/1.1 client (${tlsSummary(socket as TLSSocket)})`;
}
