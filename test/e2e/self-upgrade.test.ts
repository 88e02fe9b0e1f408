// Self-upgrade is an ordinary declaration (DESIGN invariant 6): three hosts under a
// supervisor loop (Restart=always plus the unit's rollback step) go from N to N+1 on one
// role change, and come back to N+1 from a build that crashes at start and from one that
// cannot reach the control plane, reporting the failed upgrade.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { buildHost, CRASH_AT_START, hostRelease } from "../harness/host-release";
import { api } from "../harness/api";
import { supervisedHost, type SupervisedHost } from "../harness/supervised-host";
import { Supervisor } from "../harness/supervisor";
import { waitFor } from "../harness/wait";

const N = "7.0.0";
const N1 = "7.0.1";
const CRASHES = "7.0.2";
const OFFLINE = "7.0.3";
const TRIAL_MS = 6000;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-upgrade-"));

/** Broken builds, as a bad release would be: one dies before any host code runs (CRASH_AT_START), one has no network. */
const NO_NETWORK = `require("net").Socket.prototype.connect = function () { process.nextTick(() => this.destroy(Object.assign(new Error("broken build: no network"), { code: "ECONNREFUSED" }))); return this; };`;

/** Every program the hosts run goes through these wrappers, which log their argv (invariant 5 is checked on it). */
function argvLoggingPath(log: string): string {
  const dir = path.join(tmp, "logged-bin");
  fs.mkdirSync(dir, { recursive: true });
  for (const prog of ["systemctl", "dpkg", "dpkg-query", "apt-get", "uname", "service"]) {
    const real = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map((d) => path.join(d, prog)).find((p) => fs.existsSync(p));
    fs.writeFileSync(path.join(dir, prog), `#!/bin/sh\necho "${prog} $*" >> "${log}"\n${real ? `exec ${real} "$@"` : "exit 127"}\n`, { mode: 0o755 });
  }
  return `${dir}:${process.env.PATH}`;
}

describe("self-upgrade", () => {
  let cp: ControlPlane;
  const hosts: SupervisedHost[] = [];
  const client = () => api(cp.url);
  const argvLog = path.join(tmp, "argv.log");
  const bundles: Record<string, Buffer> = {};

  /** Uploaded through the files endpoint, signed with the test release key (or carrying `signature` instead). */
  async function release(version: string, bytes: Buffer, signature?: string) {
    const resource = await hostRelease(cp.url, version, bytes);
    return signature ? { ...resource, signature } : resource;
  }

  const declare = async (resource: unknown) => client().mutate("role.upsert", { name: "fleet-host", selector: {}, resources: [resource] });
  const nodes = async () => Promise.all(hosts.map((h) => client().query("node.get", { id: h.nodeId })));

  beforeAll(async () => {
    bundles[N] = buildHost(tmp, N);
    bundles[N1] = buildHost(tmp, N1);
    bundles[CRASHES] = buildHost(tmp, CRASHES, CRASH_AT_START);
    bundles[OFFLINE] = buildHost(tmp, OFFLINE, NO_NETWORK);
    cp = await ControlPlane.start({ engine: engines()[0]! });
    const PATH = argvLoggingPath(argvLog);
    for (let i = 0; i < 3; i++) {
      const token = await client().mutate("token.create", { labels: { fleet: "upgrade" } });
      hosts.push(
        supervisedHost(`upgrade-${i}`, bundles[N]!, cp.url, token.token, {
          PATH,
          MESH_LOG_LEVEL: "info",
          MESH_LINK_TIMEOUT_MS: "5000",
          MESH_UPGRADE_TRIAL_MS: String(TRIAL_MS),
        }),
      );
    }
    // Each host's node id is its state dir's identity (node.list is sorted by name).
    const { items } = await client().query("node.list");
    expect(items).toHaveLength(3);
    for (const h of hosts) h.sup.start();
    await waitFor("three hosts on N", async () => (await nodes()).every((n) => n.state === "enrolled" && n.hostVersion === N), 60_000);
  }, 300_000);

  afterAll(async () => {
    for (const h of hosts) await h.sup.stop();
    await cp?.dispose();
    for (const h of hosts) h.host.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("upgrades three hosts from N to N+1 on one role change, and they report it", async () => {
    const resource = await release(N1, bundles[N1]!);
    const changedAt = Date.now();
    await declare(resource);
    await waitFor(
      "three hosts reporting N+1",
      async () =>
        (await nodes()).every(
          (n) =>
            n.hostVersion === N1 &&
            n.errors.length === 0 &&
            n.appliedVersion === n.declaredVersion &&
            Date.parse(n.report?.reconciledAt ?? 0) > changedAt &&
            n.owned.some((o: any) => o.id === "mesh-host"),
        ),
      90_000,
    );
    const allReported = Date.now();
    // The store that holds the host resource reads back: no host lost it across the upgrade.
    expect((await nodes()).map((n) => n.report?.storeLost)).toEqual([false, false, false]);
    for (const { sup } of hosts) {
      expect(sup.installedBytes().equals(bundles[N1]!)).toBe(true);
      expect(fs.readFileSync(`${sup.binary}.prev`).equals(bundles[N]!)).toBe(true);
      expect(fs.existsSync(path.join(sup.stateDir, "upgrade.json"))).toBe(false);
      // The old binary exited 0 by itself; the supervisor started the new one.
      const old = sup.starts.find((s) => s.version === N)!;
      expect(old.exit?.code).toBe(0);
    }
    const starts = hosts.map(({ sup }) => sup.starts.find((s) => s.version === N1)!);
    const startups = await waitFor("first-report log lines", () =>
      starts.every((s) => Supervisor.firstReportAt(s)) ? starts.map((s) => Supervisor.firstReportAt(s)! - s.at) : null,
    );
    console.log(`role change to all three reporting ${N1}: ${((allReported - changedAt) / 1000).toFixed(1)} s`);
    console.log(`host start-up to first report (node bundle): ${startups.map((ms) => `${ms} ms`).join(", ")}`);
    // Where the time goes, per host: role change -> binary in place -> old exits -> new starts -> new reports.
    for (const { sup } of hosts) {
      const old = sup.starts.find((s) => s.version === N)!;
      const next = sup.starts.find((s) => s.version === N1)!;
      const placed = Supervisor.loggedAt(old, "new host binary in place; exiting after this report for the supervisor to start it")!;
      console.log(
        `  in place +${placed - changedAt} ms, old exited +${old.exit!.at - changedAt} ms, new started +${next.at - changedAt} ms, new reported +${Supervisor.firstReportAt(next)! - changedAt} ms${/no ack for the report after the upgrade/.test(old.output) ? " (no ack for the last report within 5 s)" : ""}`,
      );
    }
  });

  it("comes back to N+1 from a build that crashes at start (the unit's rollback step) and reports the failed upgrade", async () => {
    await declare(await release(CRASHES, bundles[CRASHES]!));
    await waitFor(
      "three hosts back on N+1 reporting the crash",
      async () => (await nodes()).every((n) => n.hostVersion === N1 && n.errors.some((e: any) => /upgrade to mesh-host 7\.0\.2 failed/.test(e.message))),
      90_000,
    );
    for (const { sup } of hosts) {
      expect(sup.installedBytes().equals(bundles[N1]!)).toBe(true);
      expect(sup.starts.some((s) => /broken build: crashes at start/.test(s.output) && s.exit?.code !== 0)).toBe(true);
    }
    const n = (await nodes())[0];
    expect(n.errors.find((e: any) => e.id === "mesh-host").message).toMatch(/exited before it reached the control plane/);
  });

  it("comes back to N+1 from a build that cannot reach the control plane (the binary's own rollback) and reports it", async () => {
    await declare(await release(OFFLINE, bundles[OFFLINE]!));
    await waitFor(
      "three hosts back on N+1 reporting the unreachable control plane",
      async () =>
        (await nodes()).every(
          (n) =>
            n.hostVersion === N1 &&
            n.errors.some((e: any) => /upgrade to mesh-host 7\.0\.3 failed.*did not reach the control plane within 6 s/.test(e.message)),
        ),
      120_000,
    );
    for (const { sup } of hosts) {
      expect(sup.installedBytes().equals(bundles[N1]!)).toBe(true);
      expect(sup.starts.some((s) => s.version === OFFLINE && /upgrade rolled back/.test(s.output))).toBe(true);
      expect(sup.starts.at(-1)!.version).toBe(N1);
    }
  });

  it("refuses a mis-signed release without touching the binary", async () => {
    const good = await release("7.0.4", bundles[N1]!);
    await declare({ ...good, signature: (await release("7.0.5", bundles[N]!)).signature });
    await waitFor(
      "three hosts refusing the signature",
      async () => (await nodes()).every((n) => n.errors.some((e: any) => /signature is not the release key's/.test(e.message))),
      60_000,
    );
    for (const { sup } of hosts) expect(sup.installedBytes().equals(bundles[N1]!)).toBe(true);
  });

  it("never ran a command naming its own unit", () => {
    const lines = fs.existsSync(argvLog) ? fs.readFileSync(argvLog, "utf8").split("\n").filter(Boolean) : [];
    // The wrappers did see the host's commands (its facts run dpkg-query and systemctl), so the check is not empty.
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes("mesh-host.service"))).toEqual([]);
  });
});
