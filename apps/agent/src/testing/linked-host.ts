// A test host linked to the fake control plane: a fresh key pair the control plane knows, a temp
// directory holding the root (made) and the disk store (state, initialised), and the host over
// them, not started. All of it is stopped or removed by the test file's `cleanups`.
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WebSocket } from "ws";
import type { AuthFrame } from "@mesh/protocol";
import { startControlPlane } from "../link/fake-control-plane";
import { DiskStore } from "../store/disk-store";
import type { Cleanup } from "./cleanups";
import { testHost, type TestHostOptions } from "./test-host";

export interface LinkedHostOptions {
  /** The temp directory's name prefix. */
  prefix: string;
  onConnect: (ws: WebSocket, auth: AuthFrame) => void;
  /** What the control plane says it reads (see startControlPlane). */
  features?: string;
  /** testHost options beyond the control plane, store, root and key. */
  host?: Omit<TestHostOptions, "controlPlaneUrl" | "store" | "rootDir" | "privateKey">;
}

/** `cleanups` is run last first after each test: the host stops, then the directory goes, then the control plane. */
export async function linkedHost(cleanups: Cleanup[], o: LinkedHostOptions) {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const cp = await startControlPlane(publicKey, o.onConnect, { features: o.features });
  cleanups.push(() => cp.close());
  const base = mkdtempSync(join(tmpdir(), o.prefix));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const rootDir = join(base, "root");
  mkdirSync(rootDir);
  const stateDir = join(base, "state");
  const store = new DiskStore(stateDir);
  await store.init();
  const host = testHost({ controlPlaneUrl: cp.url, store, rootDir, privateKey, ...o.host });
  cleanups.push(() => host.stop());
  return { cp, host, base, rootDir, stateDir };
}
