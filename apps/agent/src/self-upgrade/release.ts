// Whether a downloaded host release may replace the running one: its sha256, its
// Ed25519 release signature, and its version against the running one. Pure.
import { createPublicKey, verify } from "node:crypto";
import { hostReleaseMessage, type HostResource } from "@mesh/protocol";
import { NO_RELEASE_KEY } from "./release-key";

/** Why a release (`sha`: the sha256 of its bytes) is refused, in words fit for a report; null when it may be installed. */
export function refuseRelease(sha: string, resource: HostResource, running: string, publicKeyPem: string | null): string | null {
  if (sha !== resource.sha256) return `mesh-host ${resource.version}: sha256 ${sha.slice(0, 12)}…, declared ${resource.sha256.slice(0, 12)}…; refused`;
  if (!publicKeyPem) return `mesh-host ${resource.version}: ${NO_RELEASE_KEY}; refused`;
  let signature: Buffer;
  try {
    signature = Buffer.from(resource.signature, "base64");
  } catch {
    signature = Buffer.alloc(0);
  }
  let good = false;
  try {
    good =
      signature.length === 64 && verify(null, Buffer.from(hostReleaseMessage(resource.version, resource.sha256)), createPublicKey(publicKeyPem), signature);
  } catch {
    good = false;
  }
  if (!good) return `mesh-host ${resource.version}: the signature is not the release key's over this version and sha256; refused`;
  const order = compareVersions(resource.version, running);
  if (order < 0 && !resource.allowDowngrade)
    return `mesh-host ${resource.version} is older than the running ${running}; refused (set allowDowngrade to go back)`;
  return null;
}

/** Semver precedence: numeric core, then a pre-release sorts before its release; build metadata is ignored. */
export function compareVersions(a: string, b: string): number {
  const split = (v: string) => {
    const [core, pre] = v.split("+")[0]!.split(/-(.*)/s) as [string, string | undefined];
    return { core: core.split(".").map((n) => Number(n) || 0), pre: pre === undefined ? null : pre.split(".") };
  };
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.max(x.core.length, y.core.length); i++) {
    const d = (x.core[i] ?? 0) - (y.core[i] ?? 0);
    if (d) return Math.sign(d);
  }
  if (x.pre === null || y.pre === null) return x.pre === y.pre ? 0 : x.pre === null ? 1 : -1;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return Math.sign(Number(p) - Number(q));
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return 0;
}
