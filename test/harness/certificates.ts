// Self-signed certificates for TLS tests: made and pinned as the control plane makes and pins its own.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeSelfSigned, publicKeyPin } from "@mesh/web/src/server/tls";

export interface TestCertificate {
  certPath: string;
  keyPath: string;
  pin: string;
}

export function makeCertificate(name: string): TestCertificate {
  const { certPath, keyPath } = makeSelfSigned(fs.mkdtempSync(path.join(os.tmpdir(), `mesh-cert-${name}-`)));
  return { certPath, keyPath, pin: publicKeyPin(fs.readFileSync(certPath)) };
}
