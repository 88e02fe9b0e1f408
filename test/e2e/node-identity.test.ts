// A node's identity belongs to its key (issue 10, items 2 and 18), with real hosts, a
// hand-made client speaking the enrol and link protocol, and the dashboard in Chromium:
// a stolen machine-id only makes a pending claim, revoked nodes stay revoked, proof of the
// old key replaces silently, a host that lost its store comes back through approval,
// and a link authentication accepted by one instance is refused by another.
import fs from "node:fs";
import path from "node:path";
import { sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { AUTH_HEADER, linkRefusal, replacementProofMessage, tokenIdOf } from "@mesh/protocol";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolHost } from "../harness/enrol";
import { Host } from "../harness/host";
import { authHeader, enrolFake, enrolRaw, inventory, keyPair, openLink, profile } from "../harness/link";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { seriousViolations } from "../harness/axe";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;
const role = (content: string) => ({
  name: "ident",
  selector: { labels: { ident: "yes" } },
  resources: [{ type: "file", id: "conf", path: "/etc/ident.conf", content }],
});

describe(`node identity (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  const hosts: Host[] = [];
  const client = () => api(cp.url);
  const node = (id: string) => client().query("node.get", { id });

  async function enrolled(tag: string, machineId: string): Promise<{ host: Host; nodeId: string }> {
    const host = new Host(`ident-${tag}`);
    hosts.push(host);
    fs.writeFileSync(path.join(host.root, "etc/machine-id"), `${machineId}\n`);
    const nodeId = await enrolHost(host, cp.url, { ident: "yes" });
    host.run(1);
    await waitFor("enrolled", async () => (await node(nodeId)).state === "enrolled");
    await waitFor("declared file applied", () => fs.existsSync(host.file("/etc/ident.conf")));
    return { host, nodeId };
  }

  /** A copy of a host's state dir, run as a second host: the old key trying to link. */
  function oldKeyHost(stateCopy: string): Host {
    const old = new Host("ident-old");
    hosts.push(old);
    fs.rmSync(old.stateDir, { recursive: true, force: true });
    fs.cpSync(stateCopy, old.stateDir, { recursive: true });
    old.run(1);
    return old;
  }

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    browser = await launchBrowser();
    await client().mutate("role.upsert", role("v1\n"));
  });
  afterAll(async () => {
    await browser?.close();
    for (const h of hosts) {
      await h.stop();
      h.dispose();
    }
    await cp?.dispose();
  });

  it("a token and a stolen machine-id make only a pending claim: the real host keeps its node and keeps working; an admin rejects the claim in the dashboard", async () => {
    const machineId = "1a".repeat(16);
    const { host, nodeId } = await enrolled("real", machineId);
    const { token } = await client().mutate("token.create", { labels: { evil: "yes" } });
    const attacker = keyPair();
    const claim = await enrolRaw(cp.url, { token, publicKey: attacker.publicKey, profile: profile(machineId), inventory });
    expect(claim).toMatchObject({ status: 201, body: { nodeId, awaitingApproval: true } });
    // the attacker's key cannot open the node's link, and says why
    await expect(openLink(cp.url, { [AUTH_HEADER]: await authHeader(cp.url, { nodeId, ...attacker }) })).rejects.toMatchObject({
      status: 401,
      body: expect.stringMatching(/"error":"claim-pending".*awaiting approval/),
    });
    let real = await node(nodeId);
    expect(real).toMatchObject({ state: "enrolled", labels: { ident: "yes" } });
    expect(real.claims).toHaveLength(1);
    const pendingId = real.claims[0].id as string;
    expect(await node(pendingId)).toMatchObject({ state: "pending", labels: { evil: "yes" }, declaration: null, grants: [], replacesNodeId: nodeId });
    expect((await client().query("node.counts")).byState.pending).toBe(1);
    // the real host still receives its declaration
    await client().mutate("role.upsert", role("v2\n"));
    await waitFor("real host applies v2", () => fs.readFileSync(host.file("/etc/ident.conf"), "utf8") === "v2\n");

    const page = await browser.newPage();
    await logIn(page, cp.url);
    await page.getByTestId("pending-banner").waitFor();
    await page.goto(`${cp.url}/nodes/${nodeId}`);
    await hydrated(page);
    const box = page.getByTestId("replacement-claim");
    await box.waitFor();
    expect(await box.textContent()).toMatch(/A machine claiming to be this node enrolled from \S+/);
    expect((await seriousViolations(page)).findings).toEqual([]);
    await box.getByRole("button", { name: "Reject" }).click();
    await box.waitFor({ state: "detached" });
    await page.close();
    expect((await node(pendingId)).state).toBe("revoked");
    real = await node(nodeId);
    expect(real.claims).toEqual([]);
    expect(real.events.map((e: any) => e.action)).toEqual(expect.arrayContaining(["node.replacement-claimed", "node.replacement-rejected"]));
    await expect(openLink(cp.url, { [AUTH_HEADER]: await authHeader(cp.url, { nodeId, ...attacker }) })).rejects.toMatchObject({
      status: 401,
      body: expect.stringMatching(/"error":"claim-rejected".*rejected/),
    });
    expect((await node(nodeId)).state).toBe("enrolled");
  });

  it("facts a host asserts cannot buy it grants: a granted role may not select on them, identity facts stay pinned, and every role they move it into is audited", async () => {
    const granted = {
      name: "by-fact",
      selector: { profile: { cpus: { gte: 64 } } },
      resources: [],
      grants: [{ id: "db", provider: "postgres", path: "/etc/db.env" }],
    };
    await expect(client().mutate("role.upsert", granted)).rejects.toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/may use only labels/) } },
    });
    await client().mutate("role.upsert", { ...granted, grants: [], resources: [{ type: "directory", id: "big", path: "/big" }] });
    const { token } = await client().mutate("token.create", {});
    const machineId = "5e".repeat(16);
    const fake = await enrolFake(cp.url, token, machineId);
    const ws = await openLink(cp.url, { [AUTH_HEADER]: await authHeader(cp.url, fake) });
    ws.send(JSON.stringify({ type: "facts", profile: { ...profile("6f".repeat(16)), hostname: "db-primary", cpus: 64 }, inventory }));
    const events = async () => (await node(fake.nodeId)).events as Array<{ action: string; data: any }>;
    await waitFor("roles-changed audited", async () => (await events()).some((e) => e.action === "node.roles-changed"));
    const all = await events();
    expect(all.find((e) => e.action === "node.roles-changed")!.data).toEqual({ cause: "facts", entered: ["by-fact"], left: [] });
    expect(all.find((e) => e.action === "node.facts-refused")!.data.claimed).toEqual({ machineId: "6f".repeat(16), hostname: "db-primary" });
    expect((await node(fake.nodeId)).profile).toMatchObject({ machineId, hostname: profile(machineId).hostname, cpus: 64 });
    ws.close();
    await client().mutate("role.delete", { name: "by-fact" });
  });

  it("a revoked node is not revived by enrolment, even with its old key's proof: the machine becomes a new node", async () => {
    const machineId = "2b".repeat(16);
    const { token } = await client().mutate("token.create", { labels: { ident: "yes" } });
    const old = await enrolFake(cp.url, token, machineId);
    await client().mutate("node.revoke", { id: old.nodeId });
    const { token: again } = await client().mutate("token.create", {});
    const fresh = keyPair();
    const time = new Date().toISOString();
    const signature = sign(null, Buffer.from(replacementProofMessage(old.nodeId, fresh.publicKey, tokenIdOf(again), time)), old.privateKey).toString("base64");
    const r = await enrolRaw(cp.url, {
      token: again,
      publicKey: fresh.publicKey,
      profile: profile(machineId),
      inventory,
      replaces: { nodeId: old.nodeId, time, signature },
    });
    expect(r.status).toBe(201);
    expect(r.body.nodeId).not.toBe(old.nodeId);
    expect(r.body.labels).toEqual({});
    expect(await node(old.nodeId)).toMatchObject({ state: "revoked" });
    await expect(openLink(cp.url, { [AUTH_HEADER]: await authHeader(cp.url, old) })).rejects.toMatchObject({
      status: 403,
      body: JSON.stringify(linkRefusal("node-revoked").body),
    });
  });

  it("re-enrolling with the old key still in the state dir replaces the key silently, and the old key is refused", async () => {
    const { host, nodeId } = await enrolled("proof", "3c".repeat(16));
    await host.stop();
    const oldState = path.join(path.dirname(host.stateDir), "old-state");
    fs.cpSync(host.stateDir, oldState, { recursive: true });
    const { token } = await client().mutate("token.create", {});
    const r = host.cli(["enrol", cp.url, "--token", token, "--insecure", "--force"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`enrolled as node ${nodeId}`));
    const after = await node(nodeId);
    expect(after.claims).toEqual([]);
    expect(after.events.map((e: any) => e.action)).toContain("node.re-enrol");
    host.run(1);
    await waitFor("linked again", async () => (await node(nodeId)).state === "enrolled");
    const old = oldKeyHost(oldState);
    await waitFor("old key refused", () => /bad signature/.test(old.output), 15_000);
  });

  it("a host that lost its store waits for approval, an admin approves in the dashboard, and it re-applies the node's declaration (invariant 11)", async () => {
    const { host, nodeId } = await enrolled("lost", "4d".repeat(16));
    await host.stop();
    const oldState = path.join(path.dirname(host.stateDir), "old-state");
    fs.cpSync(host.stateDir, oldState, { recursive: true });
    fs.rmSync(host.stateDir, { recursive: true });
    fs.rmSync(host.file("/etc/ident.conf"));
    const { token } = await client().mutate("token.create", {});
    const r = host.enrol(cp.url, token);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/awaits an admin's approval/);
    expect(host.status()).toMatchObject({ nodeId, awaitingApproval: true });
    host.run(1);
    await waitFor("link refused while awaiting approval", () => /awaiting approval/.test(host.output), 15_000);
    expect(fs.existsSync(host.file("/etc/ident.conf"))).toBe(false);

    const page = await browser.newPage();
    await logIn(page, cp.url);
    await hydrated(page);
    await page.getByTestId("pending-banner").getByRole("button", { name: "Show claims" }).click();
    await page.getByRole("button", { name: /^claim/, pressed: true }).waitFor();
    const rows = page.getByTestId("fleet-row");
    await waitFor("only pending rows", async () => (await rows.count()) === 1 && /awaiting approval/.test((await rows.first().textContent()) ?? ""));
    await rows.first().getByRole("link").click();
    await page.waitForURL(/\/nodes\//);
    await hydrated(page);
    const box = page.getByTestId("replacement-claim");
    expect(await box.textContent()).toMatch(/Awaiting approval: this machine enrolled from \S+/);
    expect((await seriousViolations(page)).findings).toEqual([]);
    await box.getByRole("button", { name: "Approve replacement" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Approve replacement" }).click();
    await page.getByTestId("claim-outcome").waitFor();
    await page.close();

    // the host links with its new key (after its backoff) and re-applies the node's declaration
    await waitFor("enrolled with the new key", async () => (await node(nodeId)).state === "enrolled", 60_000);
    await waitFor("declaration re-applied", () => fs.existsSync(host.file("/etc/ident.conf")), 30_000);
    const after = await node(nodeId);
    expect(after.labels).toEqual({ ident: "yes" });
    expect(after.events.map((e: any) => e.action)).toEqual(expect.arrayContaining(["node.replacement-claimed", "node.replacement-approved"]));
    await waitFor("host no longer awaits approval", () => host.status().awaitingApproval === false);
    const old = oldKeyHost(oldState);
    await waitFor("old key refused", () => /bad signature/.test(old.output), 15_000);
  });
});

const twoInstances = process.env.DATABASE_URL ? describe : describe.skip;

twoInstances("link authentication across two control-plane instances (postgres)", () => {
  let a: ControlPlane;
  let b: ControlPlane;

  beforeAll(async () => {
    a = await ControlPlane.start({ engine: "postgres" });
    b = await ControlPlane.start({ engine: "postgres", databaseUrl: a.databaseUrl });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.dispose();
  });

  it("a captured auth header accepted by one instance is refused by the other", async () => {
    const { token } = await api(a.url).mutate("token.create", {});
    const host = await enrolFake(a.url, token);
    const header = await authHeader(a.url, host);
    const ws = await openLink(a.url, { [AUTH_HEADER]: header });
    ws.close();
    await expect(openLink(b.url, { [AUTH_HEADER]: header })).rejects.toMatchObject({ status: 401, body: expect.stringMatching(/already used/) });
    await expect(openLink(a.url, { [AUTH_HEADER]: header })).rejects.toMatchObject({ status: 401, body: expect.stringMatching(/already used/) });
    // a fresh challenge from either instance still works on the other
    const fresh = await openLink(a.url, { [AUTH_HEADER]: await authHeader(b.url, host) });
    fresh.close();
  });
});
