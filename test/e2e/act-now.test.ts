// Act now (issue 13) in a real browser against a real control plane: reconcile now from the node page,
// forget a revoked node, bulk labels and bulk reconcile from the Fleet. The hosts are hand-made links
// speaking the protocol (harness/link.ts): one names reconcile-now on its upgrade, one does not. What is
// asserted is the control plane's side: the frame reaches a link that named the feature, never one that
// did not (the real host's handling of the frame is task C's).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import type WebSocket from "ws";
import { AUTH_HEADER, EVERY_HOST_FEATURE, HOST_FEATURES_HEADER } from "@mesh/protocol";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { launchBrowser, logIn } from "../harness/browser";
import { waitFor } from "../harness/wait";
import { authHeader, enrolFake, openLink, type FakeHost } from "../harness/link";

interface Linked {
  host: FakeHost;
  name: string;
  ws: WebSocket;
  reconciles: Array<Record<string, unknown>>;
}

describe("act now in headless Chromium", () => {
  let cp: ControlPlane;
  let browser: Browser;
  const open: WebSocket[] = [];

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine: engines()[0]! });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const ws of open) ws.terminate();
    await browser?.close();
    await cp?.dispose();
  });

  /** A fake host, linked now; `features` is what it names on its upgrade (none: an older host). */
  const linked = async (features: string | null, labels: Record<string, string> = {}): Promise<Linked> => {
    const { token } = await api(cp.url).mutate("token.create", { labels });
    const host = await enrolFake(cp.url, token);
    const headers: Record<string, string> = { [AUTH_HEADER]: await authHeader(cp.url, host) };
    if (features !== null) headers[HOST_FEATURES_HEADER] = features;
    const ws = await openLink(cp.url, headers);
    open.push(ws);
    const reconciles: Array<Record<string, unknown>> = [];
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === "reconcile") reconciles.push(frame);
    });
    await waitFor("the node linked", async () => (await api(cp.url).query("node.get", { id: host.nodeId })).state === "enrolled");
    const { name } = await api(cp.url).query("node.get", { id: host.nodeId });
    return { host, name, ws, reconciles };
  };

  it("reconciles a node now from its page; a host too old to be asked is told apart and sent nothing", async () => {
    const fresh = await linked(EVERY_HOST_FEATURE);
    const old = await linked(null);
    const page = await browser.newPage();
    await logIn(page, cp.url);
    await page.goto(`${cp.url}/nodes/${fresh.host.nodeId}`);
    await page.getByRole("button", { name: "Reconcile now" }).click();
    await page.getByTestId("reconcile-answer").getByText("1 of 1 node asked to reconcile now.").waitFor();
    await waitFor("the reconcile frame", () => fresh.reconciles.length === 1);
    expect(fresh.reconciles[0]).toMatchObject({ type: "reconcile", reason: expect.stringContaining("node.reconcile") });

    await page.goto(`${cp.url}/nodes/${old.host.nodeId}`);
    await page.getByRole("button", { name: "Reconcile now" }).click();
    await page
      .getByTestId("reconcile-answer")
      .getByText(/0 of 1 node asked to reconcile now; 1 with a mesh-host too old/)
      .waitFor();
    await new Promise((r) => setTimeout(r, 500));
    expect(old.reconciles).toEqual([]);
    expect(old.ws.readyState).toBe(old.ws.OPEN);
    const events = await api(cp.url).query("event.list", { action: "node.reconcile" });
    expect(events.items.length).toBe(2);
    await page.close();
  });

  it("forgets a revoked node: it leaves the Fleet list, its history stays", async () => {
    const gone = await linked(null, { forget: "me" });
    await api(cp.url).mutate("node.revoke", { id: gone.host.nodeId });
    const page = await browser.newPage();
    await logIn(page, cp.url);
    await page.goto(`${cp.url}/nodes/${gone.host.nodeId}`);
    await page.getByRole("button", { name: "Forget" }).click();
    const dialog = page.getByRole("dialog", { name: `Forget ${gone.name}?` });
    await dialog.getByText("Nothing happens to the machine").waitFor();
    await dialog.getByRole("button", { name: "Forget node" }).click();
    await page.getByText("Forgotten: not in the Fleet list").waitFor();
    await page.goto(cp.url);
    await page.getByTestId("fleet-row").first().waitFor();
    expect(await page.getByRole("link", { name: gone.name, exact: true }).count()).toBe(0);
    const list = await api(cp.url).query("node.list", { label: "forget=me" });
    expect(list.total).toBe(0);
    const history = await api(cp.url).query("event.list", { nodeId: gone.host.nodeId });
    expect(history.items.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(["node.forget", "node.revoke"]));
    await page.close();
  });

  it("sets labels on selected nodes and reconciles them now, from the Fleet", async () => {
    const a = await linked(EVERY_HOST_FEATURE, { bulk: "yes" });
    const b = await linked(EVERY_HOST_FEATURE, { bulk: "yes" });
    const page = await browser.newPage();
    await logIn(page, cp.url);
    await page.getByTestId("fleet-row").first().waitFor();
    await page.getByRole("checkbox", { name: `Select ${a.name}` }).check();
    await page.getByRole("checkbox", { name: `Select ${b.name}` }).check();
    const bar = page.getByTestId("selection-bar");
    await bar.getByText("2 nodes selected").waitFor();

    await bar.getByRole("button", { name: "Set labels" }).click();
    let dialog = page.getByRole("dialog", { name: "Set labels on 2 nodes?" });
    await dialog.getByLabel("Set (key=value, comma separated)").fill("tier=web, zone=a");
    await dialog.getByLabel("Remove (keys, comma separated)").fill("bulk");
    await dialog.getByRole("button", { name: "Set labels 2 nodes" }).click();
    await dialog.getByTestId("bulk-result").getByText("Labels changed on 2 nodes").waitFor();
    for (const n of [a, b]) expect((await api(cp.url).query("node.get", { id: n.host.nodeId })).labels).toEqual({ tier: "web", zone: "a" });
    await dialog.getByRole("button", { name: "Close" }).click();
    expect((await api(cp.url).query("event.list", { action: "node.bulk-set-labels" })).items.length).toBe(1);

    // The selection was cleared by the change; pick both again and reconcile them.
    await page.getByRole("checkbox", { name: `Select ${a.name}` }).check();
    await page.getByRole("checkbox", { name: `Select ${b.name}` }).check();
    await bar.getByRole("button", { name: "Reconcile now" }).click();
    dialog = page.getByRole("dialog", { name: "Reconcile now 2 nodes?" });
    await dialog.getByRole("button", { name: "Reconcile now 2 nodes" }).click();
    await dialog.getByTestId("bulk-result").getByText("2 of 2 nodes asked to reconcile now.").waitFor();
    await waitFor("both reconcile frames", () => a.reconciles.length === 1 && b.reconciles.length === 1);
    await page.close();
  });

  it("acts on exactly the nodes that matched when the dialog opened, not on a node that matches later", async () => {
    const a = await linked(EVERY_HOST_FEATURE, { picked: "late" });
    const b = await linked(EVERY_HOST_FEATURE, { picked: "late" });
    const page = await browser.newPage();
    await logIn(page, cp.url);
    await page.goto(`${cp.url}/?labels=${encodeURIComponent("picked=late")}`);
    await page.getByRole("checkbox", { name: `Select ${a.name}` }).check();
    const bar = page.getByTestId("selection-bar");
    await bar.getByRole("button", { name: "Select all 2 matching" }).click();
    await bar.getByText("All 2 matching nodes selected").waitFor();
    await bar.getByRole("button", { name: "Set labels" }).click();
    const dialog = page.getByRole("dialog", { name: "Set labels on 2 nodes?" });
    await dialog.getByTestId("bulk-resolved").waitFor();
    // A third node matches the filter after the admin saw "2 nodes": the action still names the two.
    const late = await linked(EVERY_HOST_FEATURE, { picked: "late" });
    await dialog.getByLabel("Set (key=value, comma separated)").fill("seen=yes");
    await dialog.getByRole("button", { name: "Set labels 2 nodes" }).click();
    await dialog.getByTestId("bulk-result").getByText("Labels changed on 2 nodes").waitFor();
    for (const n of [a, b]) expect((await api(cp.url).query("node.get", { id: n.host.nodeId })).labels).toEqual({ picked: "late", seen: "yes" });
    expect((await api(cp.url).query("node.get", { id: late.host.nodeId })).labels).toEqual({ picked: "late" });
    await page.close();
  });
});
