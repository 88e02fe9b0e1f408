// `mesh-host status [--json]`: hosted or enrolled, the node, its control plane,
// the declaration held and what the daemon last reported (from status.json).
import { promises as fs } from "node:fs";
import { loadIdentity } from "../state-dir/identity";
import { readStatusFile } from "../state-dir/status-file";
import { loadHeldDeclaration } from "../state-dir/held-declaration";
import { DiskStore } from "../store/disk-store";
import { OWNERSHIP_KEY, parseOwnership } from "../store/ownership";
import type { Store } from "../store/store";
import type { Logger } from "../log";
import { supervisedServices, type SupervisedService } from "../supervisor/supervised-manager";
import { HOST_VERSION } from "../version";
import { RELEASE_TRUST, TEST_BUILD, TEST_BUILD_WARNING, type ReleaseTrust } from "../self-upgrade/release-key";
import type { CommonOptions } from "./options";

export interface StatusView {
  /** damaged: enrolled, owning or holding something, but identity.json or node.key is unusable (see identityProblem). */
  state: "hosted" | "enrolled" | "revoked" | "damaged";
  nodeId: string | null;
  name: string | null;
  controlPlaneUrl: string | null;
  /** Version of the declaration held in the state dir (0: none). */
  declarationVersion: number;
  /** Version last reconciled by the daemon (null: the daemon has not reconciled yet). */
  appliedVersion: number | null;
  owned: number;
  drift: number | null;
  errors: number | null;
  storeLost: boolean | null;
  connected: boolean | null;
  lastReconcileAt: string | null;
  lastReconcileResult: "ok" | "errors" | "failed" | null;
  identityProblem: string | null;
  /** What the operator does about a damaged identity. */
  recovery: string | null;
  /** Writes of the host's own state that failed and are being retried (from the daemon). */
  stateErrors: string[];
  /** Bytes free for the state dir; null when it cannot be told. */
  stateDirFree: number | null;
  /** Enrolled as a replacement of a live node; the control plane waits for an admin. */
  awaitingApproval: boolean;
  hostVersion: string;
  /** Built with MESH_TEST_BUILD=1: trusts the committed test release key (then `warning` says why that matters). */
  testBuild: boolean;
  releaseKey: ReleaseTrust;
  warning?: string;
  stateDir: string;
  /** Units the host's own supervisor runs (where systemd is not PID 1); empty otherwise. */
  services: SupervisedService[];
}

export async function statusView(store: Store, stateDir: string, rootDir: string, log: Logger): Promise<StatusView> {
  const identity = await loadIdentity(store);
  const status = await readStatusFile(store);
  const held = await loadHeldDeclaration(store, log);
  const enrolled = identity.kind === "ok";
  // Before the daemon has run, the store itself says how many resources are owned.
  const live = status?.state === "enrolled" || status?.state === "revoked";
  let owned = live ? status.owned : 0;
  if (!status || !live) {
    const raw = await store.read(OWNERSHIP_KEY);
    const ownership = raw ? parseOwnership(raw) : null;
    if (ownership) owned = ownership.records.filter((r) => r.intent?.op !== "create" && r.intent?.op !== "adopt").length;
  }
  // A damaged identity on a host that owns or holds something: the daemon reconciles without a link.
  const damaged = identity.kind === "bad" && (status?.state === "damaged" || owned > 0 || held !== null);
  if (damaged && status?.state === "damaged") owned = status.owned;
  const known = identity.kind === "ok" || identity.kind === "bad" ? (identity.identity ?? null) : null;
  const fresh = (enrolled && live && status.nodeId === identity.identity.nodeId) || (damaged && status?.state === "damaged") ? status : null;
  return {
    // Revoked is what the daemon last heard from the control plane; the identity is still here.
    state: damaged ? "damaged" : !enrolled ? "hosted" : fresh?.state === "revoked" ? "revoked" : "enrolled",
    nodeId: known?.nodeId ?? null,
    name: known?.name ?? null,
    controlPlaneUrl: known?.controlPlaneUrl ?? null,
    declarationVersion: held?.version ?? 0,
    appliedVersion: fresh ? fresh.declarationVersion : null,
    owned,
    drift: fresh?.drift ?? null,
    errors: fresh?.errors ?? null,
    storeLost: fresh?.storeLost ?? null,
    connected: fresh?.connected ?? null,
    lastReconcileAt: fresh?.lastReconcileAt ?? null,
    lastReconcileResult: fresh?.lastReconcileResult ?? null,
    identityProblem: identity.kind === "bad" ? identity.reason : null,
    recovery: damaged ? recoveryFor(known?.controlPlaneUrl ?? null) : null,
    stateErrors: fresh?.stateErrors ?? [],
    stateDirFree: await freeBytes(stateDir),
    awaitingApproval: enrolled && identity.identity.awaitingApproval === true,
    hostVersion: HOST_VERSION,
    testBuild: TEST_BUILD,
    releaseKey: RELEASE_TRUST,
    ...(TEST_BUILD ? { warning: TEST_BUILD_WARNING } : {}),
    stateDir,
    services: await supervisedServices(rootDir),
  };
}

/** Re-enrolling writes a new identity and key beside the store, which it keeps: what is owned stays owned. */
function recoveryFor(controlPlaneUrl: string | null): string {
  return (
    `re-enrol with a new token: \`mesh-host enrol ${controlPlaneUrl ?? "URL"} --token T\`. ` +
    `The store is kept, so what this host owns stays owned and is still removed when its declaration drops it; ` +
    `the control plane may ask an admin to approve this machine as its node's replacement.`
  );
}

/** Below this the state dir is said to be (nearly) full: a declaration or store.json may not fit. */
const STATE_DIR_LOW_BYTES = 1024 * 1024;

async function freeBytes(dir: string): Promise<number | null> {
  try {
    const s = await fs.statfs(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

export async function statusCommand(opts: CommonOptions & { json: boolean; log: Logger }): Promise<number> {
  const store = new DiskStore(opts.stateDir);
  const view = await statusView(store, opts.stateDir, opts.root, opts.log);
  if (opts.json) {
    process.stdout.write(JSON.stringify(view, null, 2) + "\n");
    return 0;
  }
  const lines =
    view.state === "hosted"
      ? [`state: hosted (not enrolled; run \`mesh-host enrol URL --token T\`)`]
      : view.state === "damaged"
        ? [
            `state: enrolled, but its identity is DAMAGED: ${view.identityProblem}`,
            `  it keeps reconciling the declaration it holds, with no link to its control plane (nothing is reported)`,
            `  to recover: ${view.recovery}`,
            ...(view.nodeId ? [`node: ${view.nodeId} (${view.name})`] : []),
          ]
        : [
            view.state === "revoked" ? `state: revoked (the control plane refuses this node's key; its last declaration stays in force)` : `state: enrolled`,
            `node: ${view.nodeId} (${view.name})`,
            `control plane: ${view.controlPlaneUrl} (${view.connected === null ? "daemon not seen" : view.connected ? "connected" : "disconnected"})`,
          ];
  if (view.identityProblem && view.state !== "damaged") lines.push(`identity problem: ${view.identityProblem}`);
  if (view.awaitingApproval)
    lines.push(`approval: this key replaces the node's only once an admin approves it in the dashboard (the link is refused until then)`);
  lines.push(`declaration: v${view.declarationVersion} held${view.appliedVersion !== null ? `, v${view.appliedVersion} applied` : ""}`);
  lines.push(`owned: ${view.owned}`);
  if (view.lastReconcileAt) {
    lines.push(`last reconcile: ${view.lastReconcileAt} ${view.lastReconcileResult} (drift ${view.drift}, errors ${view.errors})`);
  } else {
    lines.push(`last reconcile: never`);
  }
  for (const e of view.stateErrors) lines.push(`ERROR: ${e} (retried; it recovers by itself once it can write)`);
  if (view.stateDirFree !== null && view.stateDirFree < STATE_DIR_LOW_BYTES) {
    lines.push(
      `ERROR: the state dir is full (${view.stateDirFree} bytes free): the daemon cannot keep a new declaration or its store; free space and it recovers by itself`,
    );
  }
  if (view.storeLost) lines.push(`store: lost (what was owned before it can no longer be removed)`);
  lines.push(
    `host: ${view.hostVersion}, self-upgrade trusts ${view.releaseKey === "none" ? "no release key (every upgrade refused)" : view.releaseKey === "test-key" ? "the TEST release key" : "the release key built in"}`,
  );
  lines.push(`state dir: ${view.stateDir}`);
  if (view.services.length) {
    lines.push(`services run by mesh-host's own supervisor:`);
    for (const s of view.services) {
      const pid = s.pid !== null ? ` pid ${s.pid}` : "";
      const restarts = s.restarts ? `, ${s.restarts} restart${s.restarts === 1 ? "" : "s"}` : "";
      lines.push(`  ${s.unit}: ${s.state}${pid} since ${s.since}${restarts} (${s.result}); log ${s.log}`);
    }
  }
  if (view.warning) lines.push(`WARNING: ${view.warning}`);
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}
