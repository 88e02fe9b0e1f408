// BENCH_ROLLOUT=1: a staged rollout of a change to every node (issue 14's closing figures): the plan's
// time, the canary's time from the save to its reports recorded, each wave's release → all applied (from
// rollout.get, and from the simulated hosts' frame receipts), the control plane's CPU per wave, the total.
import type postgres from "postgres";
import type { api } from "../../harness/api";
import { sleep } from "../../harness/wait";
import { CpuSampler, type CpuSample } from "./cpu-sampler";
import type { Fleet, Identity } from "./fleet";
import type { Row } from "./table";

export const ROLLOUT_POLICY = {
  mode: "staged",
  canary: { count: 10 },
  waves: { percent: 25 },
  haltAtFailurePercent: 5,
  soakSeconds: 0,
  waveTimeoutSeconds: 120,
} as const;
/** The bench's control plane ticks rollouts every 500 ms (MESH_ROLLOUT_INTERVAL_MS), not the default 2 s. */
export const ROLLOUT_INTERVAL_MS = "500";

interface WaveCounts {
  wave: number;
  nodes: number;
  applied: number;
  failed: number;
  timedOut: number;
  pending: number;
}
interface RolloutView {
  state: string;
  currentWave: number;
  waves: number;
  waveCounts: WaveCounts[];
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
const fmt = (n: number) => n.toLocaleString("en");

export async function rolloutPhase(opts: {
  client: ReturnType<typeof api>;
  sql: ReturnType<typeof postgres>;
  fleet: Fleet;
  identities: Identity[];
  controlPlanePid: () => number;
  content: (tag: string) => string;
  log: (s: string) => void;
}): Promise<{ rows: Row[]; notes: string[] }> {
  const { client, sql, fleet, identities, log } = opts;
  const nodes = identities.length;
  const role = (tag: string) => ({ name: "bench", resources: [{ type: "file", id: "bench", path: "/etc/mesh-bench.conf", content: opts.content(tag) }] });

  // role.plan of the change to every node, over HTTP (median of 5; the first warms the path).
  const planTimes: number[] = [];
  let planned = "";
  for (let i = 0; i < 6; i++) {
    const s = performance.now();
    const plan = (await client.mutate("role.plan", role("rollout"))) as Record<string, unknown>;
    if (i > 0) planTimes.push(performance.now() - s);
    if (i === 0)
      planned = Object.entries(plan)
        .filter(([, v]) => typeof v === "number")
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
  }
  log(`role.plan at ${fmt(nodes)} nodes: median ${ms(pct(planTimes, 50))}, max ${ms(Math.max(...planTimes))} (${planned})`);

  // The staged save; the sampler marks each second with the wave released last.
  const before = new Map(identities.map((i) => [i.nodeId, fleet.received.get(i.nodeId)?.version ?? 0]));
  let currentWave = 0;
  const sampler = new CpuSampler(opts.controlPlanePid, () => currentWave);
  sampler.start();
  const t0 = Date.now();
  const saved = (await client.mutate("role.upsert", { ...role("rollout"), rollout: ROLLOUT_POLICY })) as {
    rollout: { id: string; plan: { waves: number[] } } | null;
  };
  const callMs = Date.now() - t0;
  if (!saved.rollout) throw new Error("role.upsert with a staged policy started no rollout");
  const id = saved.rollout.id;
  log(`role.upsert (staged) returned in ${ms(callMs)}; rollout ${id}, waves ${saved.rollout.plan.waves.join("/")}`);

  // Poll rollout.get every 200 ms: when each wave was first seen released and first seen all applied.
  const seenReleased = new Map<number, number>([[0, t0]]);
  const seenApplied = new Map<number, number>();
  let view: RolloutView | undefined;
  let completedMs = NaN;
  const getTimes: number[] = [];
  const deadline = t0 + 600_000 + nodes * 60;
  for (;;) {
    const asked = Date.now();
    view = (await client.query("rollout.get", { id })) as RolloutView;
    const now = Date.now();
    getTimes.push(now - asked);
    currentWave = view.currentWave;
    for (let w = 0; w <= view.currentWave; w++) if (!seenReleased.has(w)) seenReleased.set(w, now);
    for (const c of view.waveCounts) if (!seenApplied.has(c.wave) && c.nodes > 0 && c.applied === c.nodes) seenApplied.set(c.wave, now);
    if (view.state === "completed") {
      completedMs = now - t0;
      break;
    }
    if (view.state !== "running" || now > deadline) break;
    await sleep(200);
  }
  await sleep(1_500); // one more CPU sample past the end
  const samples = sampler.stop();
  log(
    `rollout ${view.state} after ${ms(Date.now() - t0)}; waves ${view.waveCounts.map((c) => `${c.wave}: ${c.applied}/${c.nodes} applied, ${c.failed} failed, ${c.timedOut} timed out`).join("; ")}`,
  );

  // The release instants the worker recorded, and each node's frame receipt of its new version.
  // The report's received_at: when the control plane recorded the node's report of its released version.
  const released = await sql`
    select n.node_id, n.wave, extract(epoch from n.released_at) * 1000 as at,
           case when r.declaration_version >= n.declared_version then extract(epoch from r.received_at) * 1000 end as recorded
    from rollout_nodes n left join latest_reports r on r.node_id = n.node_id
    where n.rollout_id = ${id}`;
  const byWave = new Map<number, { releasedAt: number[]; frames: number[]; recorded: number[]; missing: number }>();
  for (const r of released) {
    const w = r.wave as number;
    const entry = byWave.get(w) ?? { releasedAt: [], frames: [], recorded: [], missing: 0 };
    byWave.set(w, entry);
    if (r.at !== null) entry.releasedAt.push(Number(r.at));
    if (r.recorded !== null) entry.recorded.push(Number(r.recorded));
    const got = fleet.received.get(r.node_id as string);
    if (got && got.version > before.get(r.node_id as string)!) entry.frames.push(got.at);
    else entry.missing++;
  }

  // CPU-seconds in [from, to): each one-second sample split by its overlap with the span.
  const cpuOf = (xs: CpuSample[], from: number, to: number) => {
    let cp = 0;
    let pg = 0;
    for (const s of xs) {
      const overlap = Math.max(0, Math.min(to, s.at) - Math.max(from, s.from)) / 1000;
      cp += s.controlPlane * overlap;
      pg += s.postgres * overlap;
    }
    return { cp, pg, s: (to - from) / 1000 };
  };
  const waveLines: string[] = [];
  for (const [w, e] of [...byWave].sort((a, b) => a[0] - b[0])) {
    const rel = e.releasedAt.length ? Math.min(...e.releasedAt) : NaN;
    const lastFrame = e.frames.length ? Math.max(...e.frames) : NaN;
    const applied = seenApplied.get(w);
    // The wave's seconds: from its release (its first node's released_at) to the next wave's release (or the end).
    const next = byWave.get(w + 1)?.releasedAt;
    const end = next?.length ? Math.min(...next) : t0 + completedMs;
    const cpu = cpuOf(samples, rel, end);
    const cpuText = `control plane ${cpu.cp.toFixed(2)} CPU-s (${((cpu.cp * 1000) / Math.max(1, e.releasedAt.length)).toFixed(2)} ms per node), Postgres ${cpu.pg.toFixed(2)} CPU-s`;
    const recorded = e.recorded.length === e.releasedAt.length ? ms(Math.max(...e.recorded) - rel) : `${e.recorded.length} of ${e.releasedAt.length}`;
    waveLines.push(
      `wave ${w}${w === 0 ? " (canary)" : ""}, ${fmt(e.releasedAt.length)} nodes: released ${ms(rel - t0)} after the save; ` +
        `frames p99 ${ms(
          pct(
            e.frames.map((f) => f - rel),
            99,
          ),
        )}, last ${ms(lastFrame - rel)} after release${e.missing ? ` (${e.missing} never got it)` : ""}; ` +
        `all reports recorded ${recorded} after release (seen applied in rollout.get ${applied ? ms(applied - rel) : "never"}); wave lasted ${ms(end - rel)}; ${cpuText}`,
    );
    log(waveLines.at(-1)!);
  }
  const canaryApplied = seenApplied.get(0);
  const canary = byWave.get(0);
  const canaryRecorded = canary && canary.recorded.length === canary.releasedAt.length ? Math.max(...canary.recorded) - t0 : NaN;
  const total = cpuOf(samples, t0, t0 + (Number.isNaN(completedMs) ? Date.now() - t0 : completedMs));
  const rows: Row[] = [
    {
      figure: `\`role.plan\` of a change to all ${fmt(nodes)} nodes (over HTTP, median of 5)`,
      measured: `${ms(pct(planTimes, 50))} (max ${ms(Math.max(...planTimes))})`,
      goal: "(no goal in the issue)",
    },
    {
      figure: `staged \`role.upsert\` to ${fmt(nodes)} nodes (canary 10, waves 25 %, soak 0, worker tick 500 ms): the call / save → canary's reports recorded / save → completed`,
      measured: `${ms(callMs)} / ${ms(canaryRecorded)} (latest_reports.received_at; seen applied in rollout.get at ${canaryApplied ? ms(canaryApplied - t0) : "never"}, polled every 200 ms, rollout.get p50 ${ms(pct(getTimes, 50))}) / ${view.state === "completed" ? ms(completedMs) : `${view.state}, not completed`}; control plane ${total.cp.toFixed(1)} CPU-s, Postgres ${total.pg.toFixed(1)} CPU-s over ${total.s.toFixed(1)} s`,
      goal: "(no goal in the issue)",
    },
    {
      figure: `staged rollout to ${fmt(nodes)} nodes, per wave (release from rollout_nodes.released_at; CPU from /proc each second, each sample split by its overlap with the wave: release → next release)`,
      measured: waveLines.join("; "),
      goal: "(no goal in the issue)",
    },
  ];
  return { rows, notes: view.state === "completed" ? [] : [`rollout ended ${view.state}`] };
}
