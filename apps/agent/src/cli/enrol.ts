// `mesh-host enrol URL --token T [--force]`: make the node's Ed25519 key pair,
// send profile and inventory with the token, and keep the identity it is given.
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import {
  ENROL_PATH,
  EnrolRequest,
  EnrolResponse,
  LIMITS,
  replacementProofMessage,
  TlsPin,
  tokenIdOf,
  type ReplacementProof,
  describeZodError,
} from "@mesh/protocol";
import { HostError } from "../host-error";
import type { Logger } from "../log";
import { endpoint, httpReason } from "../link/auth";
import { controlPlaneRequest } from "../link/control-plane-http";
import { pinOf, probeCertificate, type Trust } from "../link/trust";
import { collectInventory } from "../machine/inventory";
import { factsHash, writeSentFactsHash } from "../machine/facts";
import { machineId } from "../machine/machine-id";
import { collectProfile } from "../machine/profile";
import { loadIdentity, saveIdentity, type Identity } from "../state-dir/identity";
import { DiskStore } from "../store/disk-store";
import { OWNERSHIP_KEY, emptyOwnership, saveOwnership } from "../store/ownership";
import type { CommonOptions } from "./options";
import { readEnrolToken } from "./enrol-token";
import { describeReachFailure, notMeshAnswer } from "../link/not-mesh";
import { lockHolder } from "../state-dir/lock";
import { isoNow, systemClock } from "../clock";

export function checkControlPlaneUrl(raw: string | undefined): string {
  if (!raw) throw new HostError("usage", "enrol: the control plane URL is required (mesh-host enrol URL --token T)");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HostError("usage", `enrol: URL ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new HostError("usage", `enrol: URL must be http or https, not ${url.protocol.replace(/:$/, "")}`);
  }
  url.search = "";
  url.hash = "";
  return url.toString().replace(/\/+$/, "");
}

/**
 * Decides how to trust the control plane before anything is sent: https with a
 * matching --ca-pin, or an explicit --insecure with a warning saying why it is dangerous.
 */
export async function establishTrust(url: string, opts: { caPin?: string; insecure: boolean }): Promise<Trust> {
  const https = url.startsWith("https:");
  if (opts.caPin !== undefined && !TlsPin.safeParse(opts.caPin).success) throw new HostError("usage", `enrol: --ca-pin must look like sha256:<64 hex digits>`);
  if (opts.caPin && !https) throw new HostError("usage", "enrol: --ca-pin needs an https URL");
  if (https && opts.caPin) {
    let cert;
    try {
      cert = await probeCertificate(url);
    } catch (err) {
      throw new HostError("failure", `enrol failed: cannot reach ${url}: ${describeReachFailure(url, err)}`);
    }
    const seen = pinOf(cert);
    if (seen !== opts.caPin) {
      throw new HostError(
        "refused",
        `enrol refused: the control plane at ${url} presented a certificate whose key is ${seen}, not the pinned ${opts.caPin}; it may be an impostor. Nothing was sent.`,
      );
    }
    return { kind: "pinned", pin: seen, certPem: cert.toString() };
  }
  const why = https
    ? "without --ca-pin this host cannot tell the control plane from an impostor that would take the token and then command this machine as root"
    : "plain http sends the token and this machine's facts unencrypted, and anyone on the path can impersonate the control plane and command this machine as root";
  if (!opts.insecure)
    throw new HostError("usage", `enrol: ${why}. Use the https command with --ca-pin from the dashboard, or pass --insecure to accept the risk.`);
  process.stderr.write(`mesh-host: WARNING: enrolling with --insecure: ${why}.\n`);
  return { kind: "insecure" };
}

export async function enrolCommand(
  opts: CommonOptions & { url?: string; token?: string; tokenFile?: string; force: boolean; caPin?: string; insecure: boolean; log: Logger },
): Promise<number> {
  const url = checkControlPlaneUrl(opts.url);
  const token = await readEnrolToken(opts);
  const trust = await establishTrust(url, { caPin: opts.caPin, insecure: opts.insecure });

  const store = new DiskStore(opts.stateDir);
  await store.init();
  const existing = await loadIdentity(store);
  if (existing.kind === "ok" && !opts.force) {
    throw new HostError(
      "refused",
      `already enrolled as node ${existing.identity.nodeId} with ${existing.identity.controlPlaneUrl}; pass --force to enrol again`,
    );
  }
  // A running daemon holds the old key in memory and would be refused forever with the new one.
  const holder = existing.kind === "ok" ? await lockHolder(opts.stateDir) : null;
  if (holder !== null) {
    throw new HostError(
      "refused",
      `enrol refused: a mesh-host (pid ${holder}) is running on the state dir ${opts.stateDir} with node ${existing.kind === "ok" ? existing.identity.nodeId : "?"}'s key, and would keep it. Stop it first (\`systemctl stop mesh-host\`), enrol again, then start it. Nothing was sent.`,
    );
  }

  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const publicKeyB64 = publicKey.export({ type: "spki", format: "der" }).toString("base64");
  const privateKeyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const profile = await collectProfile(await machineId(opts.root, store), opts.root);
  const inventory = await collectInventory(profile);
  // Still holding the node's key (re-running enrol): prove it, so the node keeps its
  // identity without an admin's approval. A key that was itself awaiting approval proves nothing.
  const replaces =
    existing.kind === "ok" && !existing.identity.awaitingApproval
      ? replacementProof(existing.identity.nodeId, existing.privateKey, publicKeyB64, token)
      : undefined;
  const request = fitBody({ token, publicKey: publicKeyB64, profile, inventory, ...(replaces ? { replaces } : {}) });
  const checked = EnrolRequest.safeParse(request);
  if (!checked.success) throw new HostError("failure", `enrol: this machine's facts do not fit the protocol: ${describeZodError(checked.error)}`);

  let res;
  try {
    res = await controlPlaneRequest(endpoint(url, ENROL_PATH), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(checked.data),
      trust,
      timeoutMs: 30_000,
      maxBytes: 1024 * 1024,
    });
  } catch (err) {
    throw new HostError("failure", `enrol failed: cannot reach ${url}: ${describeReachFailure(url, err)}`);
  }
  const text = res.text();
  const notMesh = notMeshAnswer(url, ENROL_PATH, res.status, text);
  if (notMesh) throw new HostError("failure", `enrol failed: ${notMesh}`);
  if (res.status < 200 || res.status > 299) throw new HostError("refused", `enrol refused: ${httpReason(res.status, text)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HostError("failure", `enrol failed: the control plane answered ${res.status} without JSON`);
  }
  const parsed = EnrolResponse.safeParse(body);
  if (!parsed.success) throw new HostError("failure", `enrol failed: unexpected answer: ${describeZodError(parsed.error)}`);

  const identity: Identity = {
    nodeId: parsed.data.nodeId,
    name: parsed.data.name,
    labels: parsed.data.labels,
    controlPlaneUrl: url,
    publicKey: publicKeyB64,
    enrolledAt: isoNow(systemClock),
    trust,
    ...(parsed.data.awaitingApproval ? { awaitingApproval: true } : {}),
  };
  // An empty store from now on, so that a missing store later reads as lost. A store
  // already there (from `apply`) is kept: what it owns stays owned.
  if (!(await store.read(OWNERSHIP_KEY))) await saveOwnership(store, emptyOwnership());
  await saveIdentity(store, identity, privateKeyPem);
  await writeSentFactsHash(store, factsHash(checked.data.profile, checked.data.inventory));
  opts.log.info({ nodeId: identity.nodeId, name: identity.name, controlPlane: url }, "enrolled");
  if (parsed.data.awaitingApproval) {
    process.stdout.write(
      `this machine is already node ${identity.nodeId} (${identity.name}) at ${url}, and this host could not prove it holds that node's key.\n` +
        `The new key awaits an admin's approval: open the node's page in the dashboard and approve the replacement. Until then the link is refused.\n`,
    );
    return 0;
  }
  process.stdout.write(`enrolled as node ${identity.nodeId} (${identity.name}) with ${url}\n`);
  return 0;
}

function replacementProof(nodeId: string, oldKey: KeyObject, newPublicKey: string, token: string): ReplacementProof {
  const time = isoNow(systemClock);
  const signature = sign(null, Buffer.from(replacementProofMessage(nodeId, newPublicKey, tokenIdOf(token), time)), oldKey).toString("base64");
  return { nodeId, time, signature };
}

/** Keep the request under the control plane's body limit by cutting the package list. */
function fitBody(request: EnrolRequest): EnrolRequest {
  let r = request;
  while (Buffer.byteLength(JSON.stringify(r)) > LIMITS.enrolBodyBytes - 4096 && r.inventory.packages.length > 0) {
    r = {
      ...r,
      inventory: { ...r.inventory, packages: r.inventory.packages.slice(0, Math.floor(r.inventory.packages.length / 2)), truncated: true },
    };
  }
  return r;
}
