// A host whose binary a package replaced reports and exits 0 once the control plane acknowledges
// that report: also when the ack came while the host was still finding out what replaced it
// (dpkg-query, hashing the new binary for its trial), which used to leave it waiting 5 s for an
// ack it had already received ("no ack for the report after the upgrade; exiting anyway").
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { startControlPlane } from "../link/fake-control-plane";
import { waitFor } from "../testing/wait-for";
import { testHost } from "../testing/test-host";
import type { RunResult, Runner } from "../runner/runner";
import { DiskStore } from "../store/disk-store";
import { binaryIdentity } from "./binary-watch";
import { SelfUpgrade } from "./self-upgrade";
import { cleanupsAfterEach } from "../testing/cleanups";

const cleanups = cleanupsAfterEach();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("host: leaving after its binary was replaced", () => {
  it("exits at once on an ack of its last report that came before it knew it was leaving", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const cp = await startControlPlane(publicKey, () => {});
    cleanups.push(() => cp.close());
    const base = mkdtempSync(join(tmpdir(), "mesh-upgrade-ack-"));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const rootDir = join(base, "root");
    mkdirSync(rootDir);
    const binary = join(base, "mesh-host");
    writeFileSync(binary, "binary 1.0.0\n", { mode: 0o755 });
    const store = new DiskStore(join(base, "state"));
    await store.init();

    // dpkg, asked what replaced the binary, answers only once the control plane has acknowledged the
    // report that came before the question and the ack has had time to reach the host: a slow
    // dpkg-query, or a large binary to hash, as a real package upgrade has.
    let reportsBefore = Number.POSITIVE_INFINITY;
    const dpkg: Runner = {
      async run(argv: string[]): Promise<RunResult> {
        expect(argv[0]).toBe("dpkg-query");
        await waitFor("the report after the upgrade", () => cp.reports.length > reportsBefore);
        await sleep(300);
        return { code: 0, stdout: "install ok installed\t1.1.0\n", stderr: "", signal: null, timedOut: false };
      },
    };
    const lines: { msg: string }[] = [];
    const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const selfUpgrade = new SelfUpgrade({
      store,
      binary,
      running: "1.0.0",
      trialMs: 60_000,
      publicKey: null,
      log,
      startedAs: await binaryIdentity(binary),
      packages: { runner: dpkg, root: rootDir },
    });
    const host = testHost({ controlPlaneUrl: cp.url, store, rootDir, privateKey, selfUpgrade, log, driftWatch: false });
    cleanups.push(() => host.stop());
    let exited = false;
    void host.upgraded.then(() => (exited = true));
    await host.start();
    await waitFor("the host linked and reporting", () => host.connected && cp.reports.length > 0);
    await host.idle();
    expect(exited).toBe(false);

    // What dpkg does to the binary on an upgrade: a new file renamed over the path.
    writeFileSync(`${binary}.dpkg-new`, "binary 1.1.0\n", { mode: 0o755 });
    renameSync(`${binary}.dpkg-new`, binary);
    reportsBefore = cp.reports.length;
    void host.requestReconcile({ reason: "test" });

    await waitFor("the host noticing its binary was replaced", () => lines.some((l) => /host binary replaced on disk/.test(l.msg)), 5_000);
    // The ack came before: no wait for another (the bug waited 5 s, then said there was none).
    await waitFor("the host leaving", () => exited, 2_000);
    expect(lines.map((l) => l.msg)).not.toContain("no ack for the report after the upgrade; exiting anyway");
  });
});
