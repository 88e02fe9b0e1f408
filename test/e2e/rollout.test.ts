// Staged rollouts (issue 14) with real control-plane processes and real mesh-host processes, driven
// through the API as automation would. One control plane and six hosts:
// 1. a change in 3 waves (canary 2, then 2 at a time) reaches each wave's hosts only after the wave
//    before it has reported, and the rollout completes;
// 2. a change whose canary fails (a file under a parent directory no host has) halts with the reason,
//    the other four hosts keep the old file, and a webhook watching "rollout-halted" gets a signed delivery;
// 3. rolling the halted rollout back restores the old file on the canary; the other four never change;
// 4. the control plane SIGKILLed mid-rollout and started again resumes it exactly once.
// Then two control planes on one database (5): only the lease holder runs the rollout; the holder is
// killed, the other takes over at the lease's expiry and finishes it, and every wave happened once.
// Last (6): a host upgrade through a staged rollout; a release that crashes at start is rolled back by
// the canary itself (the unit's rollback step), which reports it, and the rollout halts there.
import { createHmac } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolHost } from "../harness/enrol";
import { Host } from "../harness/host";
import { buildHost, CRASH_AT_START, hostRelease } from "../harness/host-release";
import { supervisedHost, type SupervisedHost } from "../harness/supervised-host";
import { waitFor } from "../harness/wait";
import { webhookReceiver, type WebhookReceiver } from "../harness/webhook-receiver";

/** A short tick and lease, so a takeover is quick; the engine's defaults are 2 s and 15 s. */
const ROLLOUT_ENV = { MESH_ROLLOUT_INTERVAL_MS: "300", MESH_ROLLOUT_LEASE_MS: "3000", MESH_ALERT_INTERVAL_MS: "200" };
const CONF = "/etc/app.conf";
const MISSING_PARENT = "/srv/missing/extra.conf";
const LABELS = { fleet: "rollout" };
/** Generous: a loaded 2-core machine runs this alongside other suites. */
const SLOW = 90_000;

interface Enrolled {
  host: Host;
  nodeId: string;
}

/** n hosts enrolled at `url` with `labels` (LABELS), running with a 1 s interval, each linked. */
async function enrolHosts(url: string, n: number, tag: string, labels: Record<string, string> = LABELS): Promise<Enrolled[]> {
  const out: Enrolled[] = [];
  for (let i = 0; i < n; i++) {
    const host = new Host(`${tag}-${i}`);
    out.push({ host, nodeId: await enrolHost(host, url, labels) });
    host.run(1);
  }
  await waitFor(
    "every host enrolled and linked",
    async () => (await Promise.all(out.map((h) => api(url).query("node.get", { id: h.nodeId })))).every((n) => n.state === "enrolled"),
    SLOW,
  );
  return out;
}

const conf = (h: Enrolled) => h.host.readFile(CONF);
const mtime = (h: Enrolled) => fs.statSync(h.host.file(CONF)).mtimeMs;
const appRole = (content: string, extra: unknown[] = []) => ({
  name: "app",
  selector: { labels: LABELS },
  resources: [{ type: "file", id: "conf", path: CONF, content }, ...extra],
});
const staged = (extra: Record<string, unknown> = {}) => ({
  mode: "staged",
  canary: { count: 2 },
  waves: { size: 2 },
  haltAtFailurePercent: 0,
  waveTimeoutSeconds: 120,
  ...extra,
});

/** Each wave's rollout.wave events (wave -> how many), and the other rollout.* actions in order. */
function historyOf(r: any) {
  const waves = new Map<number, number>();
  for (const e of r.history) if (e.action === "rollout.wave") waves.set(e.data.wave, (waves.get(e.data.wave) ?? 0) + 1);
  return { waves: [...waves.entries()].sort((a, b) => a[0] - b[0]), actions: r.history.map((e: any) => e.action) as string[] };
}

interface RolloutNodeRow {
  node_id: string;
  wave: number;
  released_at: Date | null;
  declared_version: number | null;
  outcome: string | null;
}

/** A control plane's log lines of the rollout steps it took itself (rollout-worker.ts). */
function stepsIn(output: string): { msg: string; rollout?: string; step?: string; owner?: string }[] {
  const out = [];
  for (const line of output.split("\n")) {
    if (!line.includes('"msg":"rollout ')) continue;
    try {
      const entry = JSON.parse(line);
      if (entry.step) out.push(entry);
    } catch {
      // a line still being written
    }
  }
  return out;
}

/** The log time of a control plane's first line with this message. */
function loggedAt(output: string, msg: string): number | undefined {
  for (const line of output.split("\n")) {
    if (!line.includes(`"msg":"${msg}`)) continue;
    try {
      return JSON.parse(line).time as number;
    } catch {
      // a line still being written
    }
  }
  return undefined;
}

const postgresOnly = process.env.DATABASE_URL ? describe : describe.skip;

postgresOnly("staged rollouts with real hosts (postgres)", () => {
  let cp: ControlPlane;
  let sql: postgres.Sql;
  let hook: WebhookReceiver;
  let hosts: Enrolled[] = [];
  const client = () => api(cp.url);
  const rolloutNodes = (id: string) =>
    sql<RolloutNodeRow[]>`select node_id, wave, released_at, declared_version, outcome from rollout_nodes where rollout_id = ${id} order by wave, node_id`;
  const get = (id: string) => client().query("rollout.get", { id });
  const untilState = (id: string, state: string, what: string) =>
    waitFor(
      what,
      async () => {
        const r = await get(id);
        return r.state === state ? r : null;
      },
      SLOW,
      200,
    );
  const byNode = (id: string) => hosts.find((h) => h.nodeId === id)!;

  beforeAll(async () => {
    hook = await webhookReceiver();
    cp = await ControlPlane.start({ engine: "postgres", env: ROLLOUT_ENV });
    sql = postgres(cp.databaseUrl!, { max: 1, onnotice: () => {} });
    hosts = await enrolHosts(cp.url, 6, "rollout");
    // Version 1, all at once (no policy): every host has it before the staged changes.
    const v1 = await client().mutate("role.upsert", appRole("v1\n"));
    expect(v1.rollout).toBeNull();
    await waitFor("every host on v1", () => hosts.every((h) => conf(h) === "v1\n"), SLOW);
  }, 240_000);

  afterAll(async () => {
    for (const h of hosts) await h.host.stop();
    await sql?.end({ timeout: 1 });
    await cp?.dispose();
    await hook?.close();
    for (const h of hosts) h.host.dispose();
  });

  let waveOne: string[] = [];
  let quietSince: Map<string, number>;

  it("applies a change in 3 waves in order: each wave's hosts change only after the wave before has reported", async () => {
    const saved = await client().mutate("role.upsert", { ...appRole("v2\n"), rollout: staged({ soakSeconds: 1 }) });
    expect(saved.rollout.plan).toMatchObject({ nodes: 6, unchanged: 0, waves: [2, 2, 2], fromVersion: 1, toVersion: 2 });
    const id = saved.rollout.id as string;
    const done = await untilState(id, "completed", "the rollout completed");
    expect(hosts.map(conf)).toEqual(Array(6).fill("v2\n"));
    expect(done.waveCounts).toEqual([0, 1, 2].map((wave) => ({ wave, nodes: 2, applied: 2, failed: 0, timedOut: 0, pending: 0 })));
    const { waves, actions } = historyOf(done);
    expect(waves).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(actions).toEqual(["rollout.start", "rollout.wave", "rollout.wave", "rollout.wave", "rollout.complete"]);

    // Per host, when its file changed (the host's own write); per wave, when it had all reported (rollout.wave).
    const rows = await rolloutNodes(id);
    const waveOf = new Map(rows.map((r) => [r.node_id, r.wave]));
    const changed = (wave: number) => hosts.filter((h) => waveOf.get(h.nodeId) === wave).map(mtime);
    const reportedAt = (wave: number) => Date.parse(done.history.find((e: any) => e.action === "rollout.wave" && e.data.wave === wave).at);
    const timeline = [0, 1, 2].map((w) => ({
      wave: w,
      changed: changed(w).map((t) => new Date(t).toISOString().slice(11, 23)),
      reported: new Date(reportedAt(w)).toISOString().slice(11, 23),
    }));
    console.log(`3 waves over 6 hosts (soak 1 s): ${JSON.stringify(timeline)}`);
    for (const wave of [1, 2]) {
      expect(changed(wave)).toHaveLength(2);
      expect(Math.min(...changed(wave))).toBeGreaterThan(Math.max(...changed(wave - 1)));
      expect(Math.min(...changed(wave))).toBeGreaterThan(reportedAt(wave - 1));
    }
    // Released in wave order, each wave in one go.
    const releases = [0, 1, 2].map((w) => new Set(rows.filter((r) => r.wave === w).map((r) => r.released_at!.getTime())));
    expect(releases.map((s) => s.size)).toEqual([1, 1, 1]);
    expect([...releases[0]!][0]!).toBeLessThan([...releases[1]!][0]!);
    expect([...releases[1]!][0]!).toBeLessThan([...releases[2]!][0]!);
  }, 180_000);

  let halted: any;

  it("halts a change whose canary fails (a file under a missing parent): the other hosts keep the old file, and a signed rollout-halted alert goes out", async () => {
    const { secret } = await client().mutate("alert.create", { name: "rollouts", url: hook.url, events: ["rollout-halted"] });
    const before = new Map(hosts.map((h) => [h.nodeId, mtime(h)]));
    const saved = await client().mutate("role.upsert", {
      ...appRole("v3\n", [{ type: "file", id: "extra", path: MISSING_PARENT, content: "x\n" }]),
      rollout: staged(),
    });
    const id = saved.rollout.id as string;
    halted = await untilState(id, "halted", "the rollout halted");
    expect(halted.currentWave).toBe(0);
    expect(halted.haltReason).toBe("canary: 2 failed, 0 timed out of 2");
    expect(halted.waveCounts[0]).toMatchObject({ wave: 0, nodes: 2, failed: 2 });
    expect(historyOf(halted).actions).toEqual(["rollout.start", "rollout.wave", "rollout.halt"]);

    const rows = await rolloutNodes(id);
    const canary = rows.filter((r) => r.wave === 0).map((r) => r.node_id);
    waveOne = canary;
    expect(rows.filter((r) => r.released_at !== null).map((r) => r.node_id)).toEqual(canary);
    // The canary took what it could and reported the rest as an error: the file under the missing parent.
    for (const id of canary) {
      expect(conf(byNode(id))).toBe("v3\n");
      const node = await client().query("node.get", { id });
      expect(node.errors.map((e: any) => e.message).join("\n")).toContain(`parent directory of ${MISSING_PARENT} does not exist`);
    }
    // Everyone else: the old file, untouched (same write time as before the save).
    const rest = hosts.filter((h) => !canary.includes(h.nodeId));
    expect(rest).toHaveLength(4);
    for (const h of rest) {
      expect(conf(h)).toBe("v2\n");
      expect(mtime(h)).toBe(before.get(h.nodeId));
    }
    quietSince = new Map(rest.map((h) => [h.nodeId, mtime(h)]));

    const delivery = await waitFor("a rollout-halted delivery", () => hook.got.find((d) => d.event === "rollout-halted"), SLOW);
    expect(delivery.signature).toBe(`sha256=${createHmac("sha256", secret).update(delivery.body).digest("hex")}`);
    const body = JSON.parse(delivery.body);
    expect(body).toMatchObject({ type: "mesh.alert", event: "rollout-halted", count: 2 });
    expect(body.nodes.map((n: any) => n.id).sort()).toEqual([...canary].sort());
    expect(body.nodes[0].detail).toMatchObject({ rollout: id, role: "app", toVersion: saved.version, wave: 0, reason: halted.haltReason });
  }, 180_000);

  it("rolls the halted rollout back: the canary gets the previous file back, the hosts never reached never change", async () => {
    expect(halted?.state).toBe("halted");
    const declaredBefore = new Map(
      await Promise.all(hosts.map(async (h) => [h.nodeId, (await client().query("node.get", { id: h.nodeId })).declaredVersion] as const)),
    );
    const r = await client().mutate("rollout.rollback", { id: halted.id });
    expect(r.rolledBack).toBe(halted.id);
    // Only the two released nodes, in the same (one) wave.
    expect(r.rollout.plan).toMatchObject({ nodes: 2, waves: [2], fromVersion: halted.toVersion, toVersion: r.version });
    await untilState(r.rollout.id, "completed", "the rollback completed");
    expect((await get(halted.id)).state).toBe("rolled-back");
    await waitFor("the canary back on the previous file", () => waveOne.every((id) => conf(byNode(id)) === "v2\n"), SLOW);
    for (const id of waveOne) {
      await waitFor("the canary reporting no errors", async () => (await client().query("node.get", { id })).errors.length === 0, SLOW);
      expect(fs.existsSync(byNode(id).host.file(MISSING_PARENT))).toBe(false);
    }
    // Never reached: no new declaration, the file as it was written in test 1.
    for (const h of hosts.filter((h) => !waveOne.includes(h.nodeId))) {
      expect(conf(h)).toBe("v2\n");
      expect(mtime(h)).toBe(quietSince.get(h.nodeId));
      expect((await client().query("node.get", { id: h.nodeId })).declaredVersion).toBe(declaredBefore.get(h.nodeId));
    }
  }, 180_000);

  it("resumes a rollout exactly once after its control plane is SIGKILLed mid-rollout and started again", async () => {
    const saved = await client().mutate("role.upsert", { ...appRole("v4\n"), rollout: staged({ soakSeconds: 2 }) });
    const id = saved.rollout.id as string;
    // Mid-rollout: wave 1 released (and, on a slow poll, perhaps 2), the last wave still to judge.
    await waitFor(
      "wave 1 released",
      async () => {
        const r = await get(id);
        return r.state === "running" && r.currentWave >= 1;
      },
      SLOW,
      50,
    );
    await cp.kill("SIGKILL");
    const killedAt = Date.now();
    await cp.boot();
    const bootedAt = Date.now();
    const done = await untilState(id, "completed", "the rollout completed after the restart");
    // Where the time goes: the boot, the dead instance's lease running out, then the hosts' reconnect backoff (up to 30 s).
    const taken = loggedAt(cp.output, "rollout lease taken");
    const s = (t: number) => `${((t - killedAt) / 1000).toFixed(1)} s`;
    console.log(
      `restart mid-rollout (lease ${ROLLOUT_ENV.MESH_ROLLOUT_LEASE_MS} ms): listening ${s(bootedAt)}, lease taken ${taken ? s(taken) : "?"}, completed ${s(Date.now())} after the SIGKILL`,
    );
    await waitFor("every host on v4", () => hosts.every((h) => conf(h) === "v4\n"), SLOW);
    const { waves, actions } = historyOf(done);
    expect(waves).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(actions.filter((a) => a === "rollout.complete")).toHaveLength(1);
    const rows = await rolloutNodes(id);
    expect(rows.every((r) => r.released_at && r.outcome === "applied")).toBe(true);
    expect([0, 1, 2].map((w) => new Set(rows.filter((r) => r.wave === w).map((r) => r.released_at!.getTime())).size)).toEqual([1, 1, 1]);
    // Each host got the new version in exactly one declaration.
    const decls = await sql<{ node_id: string; n: number }[]>`
      select node_id, count(*)::int as n from declarations where role_versions ->> 'app' = ${String(saved.version)} group by node_id`;
    expect(decls.map((d) => d.n)).toEqual(Array(6).fill(1));
  }, 240_000);
});

postgresOnly("two control planes on one database run a rollout on one instance at a time (postgres)", () => {
  let a: ControlPlane;
  let b: ControlPlane;
  let sql: postgres.Sql;
  let hosts: Enrolled[] = [];
  let holder: Enrolled[] = [];
  const get = (id: string) => api(b.url).query("rollout.get", { id });

  beforeAll(async () => {
    a = await ControlPlane.start({ engine: "postgres", env: ROLLOUT_ENV });
    // An idle control plane takes no lease (it writes nothing for rollouts): A is made the holder by a
    // rollout running before B exists, of another role, to a host that has stopped (its canary never
    // reports, so that rollout runs until its long timeout). A took the lease for it and renews it every tick.
    holder = await enrolHosts(a.url, 1, "holder", { fleet: "holder" });
    await holder[0]!.host.stop();
    const held = await api(a.url).mutate("role.upsert", {
      name: "holder",
      selector: { labels: { fleet: "holder" } },
      resources: [{ type: "file", id: "holder", path: "/etc/holder.conf", content: "1\n" }],
      rollout: staged({ canary: { count: 1 }, waves: { size: 1 }, waveTimeoutSeconds: 3600 }),
    });
    expect(held.rollout.plan.waves).toEqual([1]);
    await waitFor("a holding the lease", () => a.output.includes("rollout lease taken"), SLOW);
    b = await ControlPlane.start({ engine: "postgres", databaseUrl: a.databaseUrl, env: ROLLOUT_ENV });
    sql = postgres(a.databaseUrl!, { max: 1, onnotice: () => {} });
    // Linked to B: killing A leaves the hosts' links alone, so the takeover is all that is tested.
    hosts = await enrolHosts(b.url, 4, "lease");
    await api(b.url).mutate("role.upsert", appRole("v1\n"));
    await waitFor("every host on v1", () => hosts.every((h) => conf(h) === "v1\n"), SLOW);
  }, 240_000);

  afterAll(async () => {
    for (const h of hosts) await h.host.stop();
    await sql?.end({ timeout: 1 });
    await b?.stop();
    await a?.dispose();
    for (const h of [...hosts, ...holder]) h.host.dispose();
  });

  it("the lease holder runs the rollout; killed, the other takes over after the lease expires and finishes it, each wave once", async () => {
    const saved = await api(b.url).mutate("role.upsert", { ...appRole("v2\n"), rollout: staged({ canary: { count: 1 }, waves: { size: 1 }, soakSeconds: 2 }) });
    expect(saved.rollout.plan.waves).toEqual([1, 1, 1, 1]);
    const id = saved.rollout.id as string;
    await waitFor("wave 1 released", async () => (await get(id)).currentWave >= 1, SLOW, 50);
    const [lease] = await sql<{ owner: string }[]>`select owner from rollout_lease`;
    expect(stepsIn(a.output).find((l) => l.rollout === id)?.owner).toBe(lease!.owner);
    // Until now B ran nothing: it never held the lease.
    expect(b.output).not.toContain("rollout lease taken");
    expect(stepsIn(b.output)).toEqual([]);
    await a.kill("SIGKILL");
    const killedAt = Date.now();

    const done = await waitFor(
      "the rollout completed on B",
      async () => {
        const r = await get(id);
        return r.state === "completed" ? r : null;
      },
      SLOW,
      200,
    );
    console.log(
      `takeover: B completed the rollout ${((Date.now() - killedAt) / 1000).toFixed(1)} s after A was killed (lease ${ROLLOUT_ENV.MESH_ROLLOUT_LEASE_MS} ms)`,
    );
    expect(b.output).toContain("rollout lease taken");
    await waitFor("every host on v2", () => hosts.every((h) => conf(h) === "v2\n"), SLOW);

    // Each wave judged once and released once, between the two instances.
    const { waves, actions } = historyOf(done);
    expect(waves).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
    expect(actions.filter((x) => x === "rollout.complete")).toHaveLength(1);
    // A's output is complete by now (its last lines may arrive after its exit event).
    const stepsOfA = stepsIn(a.output).filter((l) => l.rollout === id);
    const stepsOfB = stepsIn(b.output).filter((l) => l.rollout === id);
    const released = [...stepsOfA, ...stepsOfB].filter((l) => l.step === "released");
    expect(released).toHaveLength(3); // waves 1, 2 and 3
    expect(stepsOfB.filter((l) => l.step === "completed")).toHaveLength(1);
    expect(stepsOfA.filter((l) => l.step === "completed")).toHaveLength(0);
    const rows = await sql<
      RolloutNodeRow[]
    >`select node_id, wave, released_at, declared_version, outcome from rollout_nodes where rollout_id = ${id} order by wave`;
    expect(rows.map((r) => [r.wave, r.outcome, r.released_at !== null])).toEqual([0, 1, 2, 3].map((w) => [w, "applied", true]));
  }, 240_000);
});

postgresOnly("a host upgrade through a staged rollout stops at the canary when the release is bad (postgres)", () => {
  const N = "8.0.0";
  const BAD = "8.0.1";
  const GOOD = "8.0.2";
  let cp: ControlPlane;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rollout-upgrade-"));
  const bundles: Record<string, Buffer> = {};
  const hosts: SupervisedHost[] = [];
  const client = () => api(cp.url);
  const nodes = () => Promise.all(hosts.map((h) => client().query("node.get", { id: h.nodeId })));
  const fleetHost = (resource: unknown) => ({ name: "fleet-host", selector: {}, resources: [resource] });

  beforeAll(async () => {
    bundles[N] = buildHost(tmp, N);
    bundles[BAD] = buildHost(tmp, BAD, CRASH_AT_START);
    bundles[GOOD] = buildHost(tmp, GOOD);
    cp = await ControlPlane.start({ engine: "postgres", env: ROLLOUT_ENV });
    for (let i = 0; i < 3; i++) {
      const { token } = await client().mutate("token.create", {});
      const h = supervisedHost(`rollout-upgrade-${i}`, bundles[N]!, cp.url, token, {
        MESH_LOG_LEVEL: "info",
        MESH_LINK_TIMEOUT_MS: "5000",
        MESH_UPGRADE_TRIAL_MS: "6000",
      });
      hosts.push(h);
      h.sup.start();
    }
    await waitFor("three hosts on N", async () => (await nodes()).every((n) => n.state === "enrolled" && n.hostVersion === N), SLOW);
    // N declared all at once: what they run already.
    await client().mutate("role.upsert", fleetHost(await hostRelease(cp.url, N, bundles[N]!)));
    await waitFor(
      "three hosts reporting N declared",
      async () =>
        (await nodes()).every((n) => n.appliedVersion === n.declaredVersion && n.errors.length === 0 && n.owned.some((o: any) => o.id === "mesh-host")),
      SLOW,
    );
  }, 300_000);

  afterAll(async () => {
    for (const h of hosts) await h.sup.stop();
    await cp?.dispose();
    for (const h of hosts) h.host.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("the canary tries the bad release, rolls itself back to N and reports it; the rollout halts and the other hosts never try it", async () => {
    const declaredBefore = new Map((await nodes()).map((n) => [n.id, n.declaredVersion]));
    const saved = await client().mutate("role.upsert", {
      ...fleetHost(await hostRelease(cp.url, BAD, bundles[BAD]!)),
      rollout: staged({ canary: { count: 1 }, waves: { size: 1 } }),
    });
    expect(saved.rollout.plan.waves).toEqual([1, 1, 1]);
    const id = saved.rollout.id as string;
    const halted = await waitFor(
      "the rollout halted",
      async () => {
        const r = await client().query("rollout.get", { id });
        return r.state === "halted" || r.currentWave > 0 ? r : null;
      },
      SLOW,
      200,
    );
    expect(halted.state).toBe("halted");
    expect(halted.currentWave).toBe(0);
    expect(halted.haltReason).toBe("canary: 1 failed, 0 timed out of 1");

    const [canaryId] = (await client().query("rollout.get", { id })).history.find((e: any) => e.action === "rollout.halt").data.nodeIds as string[];
    const canary = hosts.find((h) => h.nodeId === canaryId)!;
    const node = await client().query("node.get", { id: canaryId });
    expect(node.hostVersion).toBe(N);
    expect(node.errors.map((e: any) => e.message).join("\n")).toMatch(/upgrade to mesh-host 8\.0\.1 failed/);
    expect(canary.sup.installedBytes().equals(bundles[N]!)).toBe(true);
    expect(canary.sup.starts.some((s) => /broken build: crashes at start/.test(s.output) && s.exit?.code !== 0)).toBe(true);
    // The others: never declared the bad release, never started it, still on N.
    for (const h of hosts.filter((h) => h !== canary)) {
      const n = await client().query("node.get", { id: h.nodeId });
      expect(n.declaredVersion).toBe(declaredBefore.get(h.nodeId));
      expect(n.hostVersion).toBe(N);
      expect(h.sup.starts.map((s) => s.version)).toEqual([N]);
      expect(h.sup.installedBytes().equals(bundles[N]!)).toBe(true);
    }
  }, 240_000);

  it("a good release after it goes through every wave and completes once each host runs it", async () => {
    const saved = await client().mutate("role.upsert", {
      ...fleetHost(await hostRelease(cp.url, GOOD, bundles[GOOD]!)),
      rollout: staged({ canary: { count: 1 }, waves: { size: 1 } }),
    });
    const id = saved.rollout.id as string;
    const done = await waitFor(
      "the rollout completed",
      async () => {
        const r = await client().query("rollout.get", { id });
        return r.state === "completed" || r.state === "halted" ? r : null;
      },
      180_000,
      200,
    );
    expect(done.state).toBe("completed");
    expect(done.waveCounts.map((w: any) => w.applied)).toEqual([1, 1, 1]);
    for (const n of await nodes()) expect(n.hostVersion).toBe(GOOD);
    for (const h of hosts) expect(h.sup.installedBytes().equals(bundles[GOOD]!)).toBe(true);
    // In order: a wave's host started the release only after the wave before was judged (its rollout.wave).
    const judged = (wave: number) => Date.parse(done.history.find((e: any) => e.action === "rollout.wave" && e.data.wave === wave).at);
    const rows = await Promise.all(hosts.map(async (h) => ({ h, started: h.sup.starts.find((s) => s.version === GOOD)!.at })));
    const order = rows.sort((a, b) => a.started - b.started);
    expect(order[1]!.started).toBeGreaterThan(judged(0));
    expect(order[2]!.started).toBeGreaterThan(judged(1));
  }, 240_000);
});
