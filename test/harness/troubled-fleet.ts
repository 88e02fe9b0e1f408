// A fleet with one node of each kind of trouble, made of real hosts and real roles (no rows written
// by hand): healthy, drifted, failing, conflicted and stale. Shared by the every-page axe test and
// `npm run screenshots`, so what is checked is what is shown.
import fs from "node:fs";
import type { ControlPlane } from "./control-plane";
import { api } from "./api";
import { Host } from "./host";
import { waitFor } from "./wait";

export type TroubleKind = "healthy" | "drifted" | "failing" | "conflicted" | "stale";
export const TROUBLE_KINDS: TroubleKind[] = ["healthy", "drifted", "failing", "conflicted", "stale"];

export interface TroubledFleet {
  hosts: Record<TroubleKind, Host>;
  ids: Record<TroubleKind, string>;
  dispose(): Promise<void>;
}

const LABELS: Record<TroubleKind, Record<string, string>> = {
  healthy: { tier: "db", zone: "a" },
  drifted: { tier: "web", zone: "a" },
  failing: { tier: "web", zone: "b" },
  conflicted: { tier: "edge", zone: "a" },
  stale: { tier: "db", zone: "b" },
};

export async function troubledFleet(cp: ControlPlane, prefix = "fleet"): Promise<TroubledFleet> {
  const client = api(cp.url);
  const hosts = Object.fromEntries(TROUBLE_KINDS.map((k) => [k, new Host(`${prefix}-${k}`)])) as Record<TroubleKind, Host>;
  const ids = {} as Record<TroubleKind, string>;
  for (const h of Object.values(hosts)) fs.mkdirSync(h.file("/srv"), { recursive: true });
  // A file where a role wants a directory: the failing host cannot write /srv/blocked/app.conf.
  fs.writeFileSync(hosts.failing.file("/srv/blocked"), "not a directory\n");

  await client.mutate("role.upsert", {
    name: "web",
    selector: { labels: { tier: "web" } },
    resources: [
      { type: "directory", id: "site", path: "/srv/site", mode: "0755" },
      { type: "file", id: "index", path: "/srv/site/index.html", content: "<h1>hello</h1>\n", mode: "0644", onDrift: "report" },
    ],
  });
  await client.mutate("role.upsert", {
    name: "zone-b-app",
    selector: { labels: { zone: "b", tier: "web" } },
    resources: [{ type: "file", id: "app-conf", path: "/srv/blocked/app.conf", content: "port=8080\n", mode: "0644" }],
  });
  await client.mutate("role.upsert", {
    name: "motd",
    resources: [{ type: "file", id: "motd", path: "/srv/motd", content: "managed by mesh\n", mode: "0644" }],
  });
  // Saved over the refusal on purpose: the edge nodes get motd from two roles that disagree.
  await client.mutate("role.upsert", {
    name: "edge",
    selector: { labels: { tier: "edge" } },
    resources: [{ type: "file", id: "motd", path: "/srv/motd", content: "edge node\n", mode: "0644" }],
    confirmConflicts: true,
  });

  for (const kind of TROUBLE_KINDS) {
    const { token } = await client.mutate("token.create", { labels: LABELS[kind] });
    const r = hosts[kind].enrol(cp.url, token);
    if (r.code !== 0) throw new Error(`enrol ${kind} failed: ${r.stderr}${r.stdout}`);
    ids[kind] = hosts[kind].status().nodeId;
    hosts[kind].run(1);
  }
  const health = async (kind: TroubleKind) => (await client.query("node.get", { id: ids[kind] })).health as string | null;
  await waitFor("the drifted host applied", () => fs.existsSync(hosts.drifted.file("/srv/site/index.html")), 30_000);
  fs.writeFileSync(hosts.drifted.file("/srv/site/index.html"), "edited by hand\n");
  await waitFor("the stale host checked in", async () => (await health("stale")) === "healthy", 30_000);
  await hosts.stale.stop();
  for (const kind of TROUBLE_KINDS) await waitFor(`the ${kind} node shown ${kind}`, async () => (await health(kind)) === kind, 30_000);

  return {
    hosts,
    ids,
    async dispose() {
      for (const h of Object.values(hosts)) {
        await h.stop();
        h.dispose();
      }
    },
  };
}
