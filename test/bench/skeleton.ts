// Walking-skeleton figures: control-plane RSS idle and with 3 hosts, host RSS idle,
// and the time from role.upsert to the file present on the host (median of 20).
// Run: DATABASE_URL=postgres://… npx tsx bench/skeleton.ts   (PGlite without it)
import fs from "node:fs";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { sleep, waitFor } from "../harness/wait";

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

async function main() {
  const engine = engines()[0]!;
  const cp = await ControlPlane.start({ engine, env: { MESH_PING_INTERVAL_MS: "15000", MESH_LOG_LEVEL: "warn" } });
  const client = api(cp.url);
  const hosts: Host[] = [];
  try {
    await sleep(3000);
    const idle = cp.rssKb();
    for (let i = 0; i < 3; i++) {
      const host = new Host(`bench${i}`);
      const { token } = await client.mutate("token.create", { labels: { bench: "yes" } });
      const r = host.enrol(cp.url, token);
      if (r.code !== 0) throw new Error(r.stderr);
      host.run(300, { MESH_LOG_LEVEL: "warn" });
      hosts.push(host);
    }
    await waitFor("3 enrolled", async () => (await client.query("node.list", { state: "enrolled" })).total === 3);
    const timings: number[] = [];
    for (let i = 0; i < 20; i++) {
      const content = `round ${i}\n`;
      const t0 = performance.now();
      await client.mutate("role.upsert", {
        name: "bench",
        selector: { labels: { bench: "yes" } },
        resources: [{ type: "file", id: "f", path: "/bench.txt", content }],
      });
      await waitFor(
        "file on every host",
        () => hosts.every((h) => fs.existsSync(h.file("/bench.txt")) && fs.readFileSync(h.file("/bench.txt"), "utf8") === content),
        20_000,
        2,
      );
      timings.push(performance.now() - t0);
    }
    await sleep(3000);
    const withHosts = cp.rssKb();
    const hostRss = hosts.map((h) => rssKb(h.pid!));
    timings.sort((a, b) => a - b);
    console.log(`engine: ${engine}`);
    console.log(`control plane RSS idle: ${mb(idle)}`);
    console.log(`control plane RSS with 3 hosts: ${mb(withHosts)}`);
    console.log(`host RSS idle: ${hostRss.map(mb).join(", ")}`);
    console.log(
      `role.upsert -> file present on all 3 hosts: median ${timings[10]!.toFixed(0)} ms, min ${timings[0]!.toFixed(0)} ms, max ${timings[19]!.toFixed(0)} ms (n=20)`,
    );
  } finally {
    for (const h of hosts) {
      await h.stop();
      h.dispose();
    }
    await cp.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
