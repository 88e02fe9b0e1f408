import { execSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TlsPin } from "@mesh/protocol";
import { loadTls } from "./tls";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe("the control plane's TLS pin", () => {
  it("is the protocol's format of the sha256 of the certificate's public key, as openssl computes it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-tls-"));
    dirs.push(dir);
    const tls = loadTls({ selfSignedDir: dir })!;
    expect(TlsPin.parse(tls.pin)).toBe(tls.pin);
    const certPath = path.join(dir, "tls-cert.pem");
    const digest = execSync(`openssl x509 -in '${certPath}' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -hex`, {
      encoding: "utf8",
    });
    expect(tls.pin).toBe(`sha256:${digest.trim().split(/\s+/).at(-1)}`);
    // Made once: loading again keeps the pin hosts hold.
    expect(loadTls({ selfSignedDir: dir })!.pin).toBe(tls.pin);
  });
});
