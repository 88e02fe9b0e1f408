// What a test host reports: a plausible profile, an empty inventory, a fresh Ed25519 key at enrolment
// and an empty report after, shared by the service tests so each says only what it varies.
import { generateKeyPairSync } from "node:crypto";
import type { Inventory, Profile, Report } from "@mesh/protocol";

export function testProfile(machineId: string, over: Partial<Profile> = {}): Profile {
  return {
    hostname: "h-" + machineId.slice(0, 4),
    os: "debian",
    osRelease: "Debian 12",
    osVersionId: "12",
    kernel: "6.1",
    arch: "x86_64",
    cpus: 2,
    memoryBytes: 1,
    diskBytes: 1,
    initSystem: "systemd",
    packageManager: "dpkg",
    machineId,
    hostVersion: "0.1.0",
    ...over,
  };
}

export const emptyInventory = (): Inventory => ({ packages: [], units: [], ports: [], mounts: [], truncated: false });

/** A node key pair: the private key to sign with, the public one as enrolment sends it (SPKI DER, base64). */
export function testKeyPair() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return { privateKey, publicKey: publicKey.export({ type: "spki", format: "der" }).toString("base64") };
}

/** A report with nothing owned, drifted or failed, for this declaration version; `over` says what a test varies. */
export function testReport(declarationVersion = 1, over: Partial<Report> = {}): Report {
  return { declarationVersion, owned: [], drift: [], errors: [], skipped: [], storeLost: false, reconciledAt: new Date().toISOString(), ...over };
}
