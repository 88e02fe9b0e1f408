// Issue 12, item 3: what a host reported is not lost when the control plane could not store it.
// A real control plane on a Postgres of the test's own and a real host: the database stops, drift
// is made by hand and the host corrects it (its report cannot be stored), the database comes back:
// the drift's audit event appears, exactly once, however often the host sent that report again.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane } from "../harness/control-plane";
import { PrivatePostgres } from "../harness/private-postgres";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { waitFor } from "../harness/wait";

const motd = { type: "file", id: "motd", path: "/etc/motd", content: "managed by mesh\n", mode: "0644" };
const conf = { type: "file", id: "conf", path: "/etc/app.conf", content: "port=8080\n", mode: "0644" };

describe("reports across a database outage", () => {
  let pg: PrivatePostgres;
  let cp: ControlPlane;
  let host: Host;
  let nodeId: string;
  const client = () => api(cp.url);
  const driftEvents = async (id: string) => {
    const node = await client().query("node.get", { id: nodeId });
    return node.events.filter((e: any) => e.action === "node.drift" && e.data.ids.includes(id));
  };

  beforeAll(async () => {
    pg = await PrivatePostgres.start();
    cp = await ControlPlane.start({ engine: "postgres", databaseUrl: pg.url });
    host = new Host("fault-reports");
    const token = await client().mutate("token.create", { labels: { tier: "web" } });
    expect(host.enrol(cp.url, token.token).code).toBe(0);
    nodeId = (await client().query("node.list")).items[0].id;
    host.run(1);
    await client().mutate("role.upsert", { name: "base", selector: {}, resources: [motd, conf] });
    await waitFor(
      "files applied and reported",
      async () => {
        const n = await client().query("node.get", { id: nodeId });
        return n.owned.length === 2 && n.appliedVersion === n.declaredVersion && n.state === "enrolled";
      },
      60_000,
    );
  });
  afterAll(async () => {
    await host?.stop();
    host?.dispose();
    await cp?.dispose();
    await pg?.dispose();
  });

  it("tells drift corrected while the database was stopped once it is back, exactly once", async () => {
    expect(await driftEvents("motd")).toHaveLength(0);
    pg.stop("fast");
    fs.writeFileSync(host.file("/etc/motd"), "tampered during the outage\n");
    await waitFor("drift corrected by the host", () => fs.readFileSync(host.file("/etc/motd"), "utf8") === motd.content, 30_000);
    // Several more reconciles (and reports nobody could store) while the database stays down.
    const lines = () => host.output.split("\n").filter((l) => l.includes('"msg":"reconciled"')).length;
    const after = lines();
    await waitFor("more reconciles during the outage", () => lines() >= after + 3, 30_000);

    pg.start();
    await waitFor("the drift's event", async () => (await driftEvents("motd").catch(() => [])).length > 0, 90_000);
    // Drift made after the outage is told as usual (its event comes after the first, in order).
    fs.writeFileSync(host.file("/etc/app.conf"), "port=1\n");
    await waitFor("later drift told", async () => (await driftEvents("conf")).length > 0, 60_000);
    // The host kept and sent that report again over several links and reconciles: stored once.
    expect(await driftEvents("motd")).toHaveLength(1);
    expect(await driftEvents("conf")).toHaveLength(1);
    const motdEvent = (await driftEvents("motd"))[0];
    expect(motdEvent.data.entries.find((d: any) => d.id === "motd").corrected).toBe(true);
    // The host numbers its reports (this control plane said it reads that): how a report sent again is known.
    const node = await client().query("node.get", { id: nodeId });
    expect(node.report.origin).toEqual({ stream: expect.stringMatching(/^[0-9a-f]{32}$/), sequence: expect.any(Number) });
  });

  it("sends a report it holds again after a restart of the host, and the control plane stores it once", async () => {
    // The host is stopped with a drift report it could not have stored: the database is down.
    pg.stop("fast");
    fs.writeFileSync(host.file("/etc/motd"), "tampered again\n");
    await waitFor("drift corrected by the host", () => fs.readFileSync(host.file("/etc/motd"), "utf8") === motd.content, 30_000);
    await host.stop();
    pg.start();
    host.run(1);
    await waitFor("the second drift's event", async () => (await driftEvents("motd").catch(() => [])).length === 2, 90_000);
    fs.writeFileSync(host.file("/etc/app.conf"), "port=2\n");
    await waitFor("later drift told", async () => (await driftEvents("conf")).length === 2, 60_000);
    expect(await driftEvents("motd")).toHaveLength(2);
  });
});
