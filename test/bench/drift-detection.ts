// Drift detection figures: a hand edit of an owned file -> the drift visible through the API
// (node.get), with a real control plane and a real mesh-host daemon whose timer is 300 s, so
// what is measured is the host's watch (coalescing window + reconcile + report + API).
// Also a burst: 1,000 owned files rewritten by a script -> how many reconciles the host ran.
// Run: npm run bench:drift -w @mesh/test (after `npx turbo run build`); DATABASE_URL=… for Postgres.
import fs from "node:fs";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { sleep, waitFor } from "../harness/wait";

const ROUNDS = Number(process.env.MESH_BENCH_ROUNDS ?? 15);
const BURST = Number(process.env.MESH_BENCH_BURST ?? 1000);

async function main() {
  const engine = engines()[0]!;
  const cp = await ControlPlane.start({ engine, env: { MESH_LOG_LEVEL: "warn" } });
  const client = api(cp.url);
  const host = new Host("bench-drift");
  try {
    const { token } = await client.mutate("token.create", { labels: { bench: "drift" } });
    const r = host.enrol(cp.url, token);
    if (r.code !== 0) throw new Error(r.stderr);
    host.run(300, { MESH_LOG_LEVEL: "info" });
    const nodeId = (await client.query("node.list")).items[0].id;
    const burst = Array.from({ length: BURST }, (_, i) => ({
      type: "file",
      id: `b${i}`,
      path: `/srv/burst/f${i}.conf`,
      content: `n=${i}\n`,
      mode: "0644",
      onDrift: "report",
    }));
    await client.mutate("role.upsert", {
      name: "drift",
      selector: { labels: { bench: "drift" } },
      resources: [
        { type: "file", id: "watched", path: "/etc/watched.conf", content: "declared\n", mode: "0644", onDrift: "report" },
        { type: "directory", id: "srv", path: "/srv", mode: "0755" },
        { type: "directory", id: "burst", path: "/srv/burst", mode: "0755" },
        ...burst,
      ],
    });
    await waitFor("owned", async () => (await client.query("node.get", { id: nodeId })).owned.length === BURST + 3, 60_000, 200);
    await sleep(1000);

    const times: number[] = [];
    /** Edit -> the host's "reconciled" log line (its pino time): the host's share of the total. */
    const hostShare: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const edited = i % 2 === 0;
      const from = host.output.length;
      const wall = Date.now();
      const t0 = performance.now();
      fs.writeFileSync(host.file("/etc/watched.conf"), edited ? `edited ${i}\n` : "declared\n");
      await waitFor(
        "drift in the API",
        async () => {
          const n = await client.query("node.get", { id: nodeId });
          return n.drift.some((d: any) => d.id === "watched") === edited;
        },
        30_000,
        20,
      );
      times.push(performance.now() - t0);
      const line = host.output
        .slice(from)
        .split("\n")
        .find((l) => l.includes('"msg":"reconciled"'));
      if (line) hostShare.push(JSON.parse(line).time - wall);
      await sleep(300);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(0);
    hostShare.sort((a, b) => a - b);

    const reconciles = () => (host.output.match(/"msg":"reconciled"/g) ?? []).length;
    const before = reconciles();
    const t0 = performance.now();
    for (let i = 0; i < BURST; i++) fs.writeFileSync(host.file(`/srv/burst/f${i}.conf`), `rewritten ${i}\n`);
    const written = performance.now() - t0;
    await waitFor("burst drift in the API", async () => (await client.query("node.get", { id: nodeId })).drift.length >= BURST, 60_000, 50);
    const visible = performance.now() - t0;
    await sleep(3000);
    const burstReconciles = reconciles() - before;

    console.log(`engine: ${engine}; host timer 300 s (every figure below is the watch)`);
    console.log(
      `edit -> drift (or its end) visible in node.get: median ${at(0.5)} ms, p90 ${at(0.9)} ms, min ${times[0]!.toFixed(0)} ms, max ${times.at(-1)!.toFixed(0)} ms (n=${ROUNDS})`,
    );
    console.log(
      `of which edit -> the host's reconcile done (its log line): median ${hostShare[Math.floor(hostShare.length / 2)] ?? "?"} ms, max ${hostShare.at(-1) ?? "?"} ms (the rest: report over the link, stored, read by node.get)`,
    );
    if (BURST > 0)
      console.log(
        `burst: ${BURST} owned files rewritten in ${written.toFixed(0)} ms -> all ${BURST} drifted visible in node.get after ${visible.toFixed(0)} ms; reconciles run for the burst: ${burstReconciles}`,
      );
  } finally {
    await host.stop();
    host.dispose();
    await cp.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
