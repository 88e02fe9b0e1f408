// TLS for the control plane: a certificate and key from files, or a self-signed
// pair made once (openssl) and kept in the data directory. The pin hosts check is
// the sha256 of the certificate's public key (SPKI), as kubeadm's CA hash.
import { execFileSync } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { tlsPin } from "@mesh/protocol";

export interface TlsMaterial {
  cert: string;
  key: string;
  /** "sha256:<hex>" of the certificate's SubjectPublicKeyInfo. */
  pin: string;
}

/** The pin of a certificate's public key: the control plane's one place that hashes it (the format is the protocol's). */
export function publicKeyPin(certPem: string | Buffer): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: "spki", format: "der" });
  return tlsPin(createHash("sha256").update(spki).digest("hex"));
}

/** A self-signed P-256 certificate for loopback and localhost in `dir`, made once (the whole-system tests make theirs here too). */
export function makeSelfSigned(dir: string): { certPath: string; keyPath: string } {
  const certPath = path.join(dir, "tls-cert.pem");
  const keyPath = path.join(dir, "tls-key.pem");
  if (fs.existsSync(certPath) && fs.existsSync(keyPath)) return { certPath, keyPath };
  fs.mkdirSync(dir, { recursive: true });
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "3650",
      "-subj",
      "/CN=mesh-control-plane",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ],
    { stdio: "ignore" },
  );
  fs.chmodSync(keyPath, 0o600);
  return { certPath, keyPath };
}

export function loadTls(opts: { certPath?: string; keyPath?: string; selfSignedDir?: string }): TlsMaterial | null {
  let { certPath, keyPath } = opts;
  if (!certPath && !keyPath && opts.selfSignedDir) ({ certPath, keyPath } = makeSelfSigned(opts.selfSignedDir));
  if (!certPath || !keyPath) return null;
  const cert = fs.readFileSync(certPath, "utf8");
  const key = fs.readFileSync(keyPath, "utf8");
  return { cert, key, pin: publicKeyPin(cert) };
}
