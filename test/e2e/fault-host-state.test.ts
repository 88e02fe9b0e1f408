// A host never lies about its own state (issue 12, item 6), with a real control plane and real
// hosts: its state dir on a small tmpfs filled up and then freed, a damaged identity, and a store
// replaced by an older copy of itself.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolHost } from "../harness/enrol";
import { Host } from "../harness/host";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;
const file = (id: string) => ({ type: "file", id, path: `/etc/${id}.conf`, content: `${id}\n`, mode: "0644" });
const role = (name: string, ids: string[]) => ({ name, selector: { labels: { scenario: name } }, resources: ids.map(file) });

describe(`a host's own state under faults (${engine})`, () => {
  let cp: ControlPlane;
  const hosts: Host[] = [];
  const mounts: string[] = [];
  const client = () => api(cp.url);
  const node = (id: string) => client().query("node.get", { id });

  /** A host of its own machine (machine-id), enrolled for `scenario`, its daemon running. */
  async function enrolled(scenario: string, before?: (host: Host) => void): Promise<{ host: Host; nodeId: string }> {
    const host = new Host(`state-${scenario}`);
    hosts.push(host);
    fs.writeFileSync(path.join(host.root, "etc/machine-id"), `${randomBytes(16).toString("hex")}\n`);
    before?.(host);
    const nodeId = await enrolHost(host, cp.url, { scenario });
    host.run(1);
    await waitFor("enrolled", async () => (await node(nodeId)).state === "enrolled");
    return { host, nodeId };
  }

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
  });
  afterAll(async () => {
    for (const h of hosts) await h.stop();
    for (const m of mounts) execFileSync("umount", ["-l", m]);
    for (const h of hosts) h.dispose();
    await cp?.dispose();
  });

  it("a full state dir: a declaration it cannot keep is an error in the report and in status, retried, and applied once space returns", async () => {
    await client().mutate("role.upsert", role("full", ["full-1"]));
    const { host, nodeId } = await enrolled("full", (h) => {
      fs.mkdirSync(h.stateDir, { recursive: true });
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", h.stateDir]);
      mounts.push(h.stateDir);
    });
    await waitFor("v1 applied", async () => fs.existsSync(host.file("/etc/full-1.conf")) && (await node(nodeId)).errors.length === 0);

    // Fill the state dir to the last byte.
    const filler = path.join(host.stateDir, "filler");
    const fd = fs.openSync(filler, "w");
    for (const size of [1 << 16, 4096, 1]) {
      const chunk = Buffer.alloc(size);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      }
    }
    fs.closeSync(fd);

    await client().mutate("role.upsert", role("full", ["full-1", "full-2"]));
    const refused = await waitFor("a report saying the declaration cannot be kept", async () => {
      const n = await node(nodeId);
      return n.errors.some((e: { message: string }) => /cannot keep declaration v\d+ \(ENOSPC/.test(e.message)) && n;
    });
    expect(refused.appliedVersion).toBeLessThan(refused.declaredVersion);
    expect(fs.existsSync(host.file("/etc/full-2.conf"))).toBe(false);
    const said = host.cli(["status"]);
    expect(said.stdout).toMatch(/ERROR: the state dir is full \(\d+ bytes free\)/);

    // Space returns: no push, no restart; the host recovers by itself.
    fs.rmSync(filler);
    await waitFor("v2 applied once space returned", () => fs.existsSync(host.file("/etc/full-2.conf")));
    await waitFor("a report saying all is well again", async () => {
      const n = await node(nodeId);
      return n.errors.length === 0 && n.appliedVersion === n.declaredVersion && n.owned.length === 2;
    });
    expect(host.cli(["status"]).stdout).not.toMatch(/ERROR/);
  });

  it("a damaged identity on a host that owns resources: never hosted, keeps reconciling, says what is damaged and how to recover", async () => {
    await client().mutate("role.upsert", role("damaged", ["damaged"]));
    const { host, nodeId } = await enrolled("damaged");
    await waitFor("applied", () => fs.existsSync(host.file("/etc/damaged.conf")));
    await host.stop();
    fs.writeFileSync(path.join(host.stateDir, "identity.json"), '{"nodeId": "trunc');
    host.run(1);
    const status = await waitFor("status says damaged", () => {
      const s = host.status();
      return s.state === "damaged" && s.lastReconcileAt && s;
    });
    expect(status).toMatchObject({
      identityProblem: "identity.json is not JSON",
      owned: 1,
      recovery: expect.stringMatching(/mesh-host enrol .*--token T.*store is kept/),
    });
    // It keeps reconciling its last declaration: drift on what it owns is corrected.
    fs.writeFileSync(host.file("/etc/damaged.conf"), "changed by hand\n");
    await waitFor("drift corrected without a link", () => fs.readFileSync(host.file("/etc/damaged.conf"), "utf8") === "damaged\n");
    const text = host.cli(["status"]).stdout;
    expect(text).toMatch(/^state: enrolled, but its identity is DAMAGED: identity.json is not JSON$/m);
    expect(text).toMatch(/to recover: re-enrol with a new token/);
    expect(host.output).toMatch(/identity damaged/);

    // The recovery it names: re-enrol (no --force over a damaged identity); the store is kept. Without the
    // old key's proof the control plane asks an admin to approve this machine as the node's replacement.
    const { token } = await client().mutate("token.create", { labels: { scenario: "damaged" } });
    const again = host.enrol(cp.url, token);
    expect(again.code, again.stderr).toBe(0);
    const [claim] = (await node(nodeId)).claims;
    await client().mutate("node.approveReplacement", { id: claim.id });
    await waitFor("linked again by itself, owning what it owned, its store not lost", async () => {
      const n = await node(nodeId);
      return n.state === "enrolled" && n.owned.length === 1 && !n.storeLost && host.status().state === "enrolled";
    });
  });

  it("a store replaced by an older copy is a store loss: found by its generation, kept aside and reported as lost", async () => {
    await client().mutate("role.upsert", role("rollback", ["old"]));
    const { host, nodeId } = await enrolled("rollback");
    await waitFor("v1 reported", async () => (await node(nodeId)).owned.length === 1);
    const backup = fs.readFileSync(path.join(host.stateDir, "store.json"));
    await client().mutate("role.upsert", role("rollback", ["old", "new"]));
    await waitFor("v2 reported", async () => {
      const n = await node(nodeId);
      return n.owned.length === 2 && n.storeGeneration > JSON.parse(backup.toString()).generation;
    });
    await host.stop();

    // An operator restores an older backup of the store.
    fs.writeFileSync(path.join(host.stateDir, "store.json"), backup);
    host.run(1);
    const lost = await waitFor("node.store-lost, saying the store was rolled back", async () =>
      (await node(nodeId)).events.find((e: { action: string; data: { rolledBack?: unknown } }) => e.action === "node.store-lost" && e.data.rolledBack),
    );
    expect(lost.data.rolledBack.storeGeneration).toBeLessThan(lost.data.rolledBack.acknowledged);
    expect(fs.readdirSync(host.stateDir).filter((n) => n.startsWith("store.json.rolled-back-"))).toHaveLength(1);
    // The loss was said and acknowledged; the host owns what it re-applied, with a store newer than any before.
    await waitFor("the loss acknowledged", async () => {
      const n = await node(nodeId);
      return !n.storeLost && n.owned.length === 2 && n.storeGeneration > lost.data.rolledBack.acknowledged;
    });
  });
});
