// A Host for tests that link it to the fake control plane: the identity enrolment would have left,
// a quick backoff, a silent log. Callers own its lifetime (stop it in their cleanup).
import { createPublicKey, type KeyObject } from "node:crypto";
import { Host } from "../host";
import pino from "pino";
import { silentLogger, type Logger } from "../log";
import { Root } from "../resources/root";
import type { SelfUpgrade } from "../self-upgrade/self-upgrade";
import type { Store } from "../store/store";
import { Backoff } from "../link/backoff";
import type { Clock } from "../clock";

export const TEST_NODE_ID = "6a1f0d2e-7c2b-4b8e-9f3a-1d2c3b4a5f61";

export interface TestHostOptions {
  controlPlaneUrl: string;
  store: Store;
  rootDir: string;
  privateKey: KeyObject;
  nodeId?: string;
  intervalMs?: number;
  linkTimeoutMs?: number;
  revokedRetryMs?: number;
  driftWatch?: false | { quietMs?: number; maxDelayMs?: number };
  selfUpgrade?: SelfUpgrade;
  log?: Logger;
  clock?: Clock;
}

export function testHost(o: TestHostOptions): Host {
  return new Host({
    store: o.store,
    root: new Root(o.rootDir),
    identity: {
      nodeId: o.nodeId ?? TEST_NODE_ID,
      name: "test-node",
      labels: {},
      controlPlaneUrl: o.controlPlaneUrl,
      trust: { kind: "insecure" },
      publicKey: createPublicKey(o.privateKey).export({ type: "spki", format: "der" }).toString("base64"),
      enrolledAt: new Date().toISOString(),
    },
    privateKey: o.privateKey,
    intervalMs: o.intervalMs ?? 60_000,
    linkTimeoutMs: o.linkTimeoutMs ?? 45_000,
    hostVersion: "test",
    log: o.log ?? (process.env.MESH_TEST_LOG ? pino({ level: "info" }) : silentLogger()),
    backoff: new Backoff({ baseMs: 20, capMs: 100, ...(o.clock ? { now: () => o.clock!.now() } : {}) }),
    revokedRetryMs: o.revokedRetryMs ?? 50,
    reconcileRetry: { baseMs: 20, capMs: 200 },
    driftWatch: o.driftWatch ?? { quietMs: 50, maxDelayMs: 200 },
    selfUpgrade: o.selfUpgrade ?? null,
    ...(o.clock ? { clock: o.clock } : {}),
  });
}
