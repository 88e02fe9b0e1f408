// Self-signed certificates for TLS tests, made with openssl on loopback names.
import { execFileSync } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface TestCertificate {
  certPath: string;
  keyPath: string;
  pin: string;
}

export function makeCertificate(name: string): TestCertificate {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mesh-cert-${name}-`));
  const certPath = path.join(dir, "cert.pem");
  const keyPath = path.join(dir, "key.pem");
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
      "2",
      "-subj",
      `/CN=${name}`,
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ],
    { stdio: "ignore" },
  );
  const spki = new X509Certificate(fs.readFileSync(certPath)).publicKey.export({ type: "spki", format: "der" });
  return { certPath, keyPath, pin: `sha256:${createHash("sha256").update(spki).digest("hex")}` };
}
