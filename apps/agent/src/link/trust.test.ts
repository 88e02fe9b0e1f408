import { execSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pinOf, Trust } from "./trust";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("the host's pin of a certificate", () => {
  it("is the sha256 of its public key in the protocol's format, as openssl computes it", () => {
    const dir = mkdtempSync(join(tmpdir(), "mesh-pin-"));
    dirs.push(dir);
    const sh = (cmd: string) => execSync(cmd, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=pin -keyout key.pem -out cert.pem");
    const digest = sh("openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -hex").trim().split(/\s+/).at(-1);
    const pin = pinOf(new X509Certificate(readFileSync(join(dir, "cert.pem"))));
    expect(pin).toBe(`sha256:${digest}`);
    expect(Trust.safeParse({ kind: "pinned", pin, certPem: readFileSync(join(dir, "cert.pem"), "utf8") }).success).toBe(true);
  });

  it("kept in the identity must be the protocol's format", () => {
    const parsed = Trust.safeParse({ kind: "pinned", pin: `sha256:${"AB".repeat(32)}`, certPem: "x".repeat(100) });
    expect(parsed.error?.issues[0]?.message).toMatch(/sha256:<64 lower-case hex digits>/);
  });
});
