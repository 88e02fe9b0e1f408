// Exiting for an upgrade happens once: once a run saw the binary replaced, the triggers that come
// while the host waits to leave (a timer, a drift, a reconcile asked for) start no run and no second exit.
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startControlPlane } from "../link/fake-control-plane";
import { waitFor } from "../testing/wait-for";
import { testHost } from "../testing/test-host";
import { DiskStore } from "../store/disk-store";
import type { SelfUpgrade } from "./self-upgrade";
import { cleanupsAfterEach } from "../testing/cleanups";

const cleanups = cleanupsAfterEach();

describe("host: exiting for an upgrade", () => {
  it("exits once, and starts no run while it is leaving", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const cp = await startControlPlane(publicKey, () => {});
    cleanups.push(() => cp.close());
    const base = mkdtempSync(join(tmpdir(), "mesh-upgrade-once-"));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const rootDir = join(base, "root");
    mkdirSync(rootDir);
    const store = new DiskStore(join(base, "state"));
    await store.init();
    // The binary is replaced from the start: every run that asks is told so.
    let asked = 0;
    const selfUpgrade = {
      staged: null,
      running: "1.0.0",
      async replacedOnDisk() {
        asked++;
        return true;
      },
    } as unknown as SelfUpgrade;
    const host = testHost({ controlPlaneUrl: cp.url, store, rootDir, privateKey, selfUpgrade, driftWatch: false });
    cleanups.push(() => host.stop());
    let exits = 0;
    void host.upgraded.then(() => exits++);
    await host.start();
    await waitFor("the host leaving for the upgrade", () => exits === 1, 10_000);
    const reports = cp.reports.length;
    const again = await host.requestReconcile({ reason: "test" });
    expect(again).toMatchObject({ ok: false, error: expect.stringMatching(/exiting for an upgrade/) });
    await host.idle();
    expect(asked).toBe(1);
    expect(cp.reports.length).toBe(reports);
  });
});
