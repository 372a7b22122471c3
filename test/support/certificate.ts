import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ensureDebianTools, TLS_TOOLS } from "./debian-tools.js";

/** A throw-away self-signed certificate for 127.0.0.1 and localhost (PEM files). */
export interface Certificate {
  certFile: string;
  keyFile: string;
}

/** Makes one with the openssl command (P-256, valid two days), in `dir`. */
export function makeCertificate(dir: string, name = "server"): Certificate {
  const certFile = join(dir, `${name}-cert.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
  const missing = ensureDebianTools(TLS_TOOLS);
  if (missing) throw new Error(`a TLS endpoint needs a certificate made with openssl: ${missing}`);
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", keyFile, "-out", certFile],
    { stdio: "ignore" },
  );
  return { certFile, keyFile };
}
