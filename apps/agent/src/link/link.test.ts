// The link against a tiny in-test control plane (node:http + ws on 127.0.0.1):
// the challenge is signed, a pushed declaration is applied and reported, and
// garbage from the server, a refusal or a silent link never crash the host.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import type { AuthFrame } from "@mesh/protocol";
import { waitFor } from "../testing/wait-for";
import { linkedHost } from "../testing/linked-host";
import { ManualClock } from "../manual-clock";
import { cleanupsAfterEach } from "../testing/cleanups";

const cleanups = cleanupsAfterEach();

async function setup(onConnect: (ws: WebSocket, auth: AuthFrame) => void, linkTimeoutMs = 45_000, features?: string, clock?: ManualClock) {
  return linkedHost(cleanups, {
    prefix: "mesh-link-",
    onConnect,
    features,
    host: { linkTimeoutMs, clock, nodeId: "6a1f0d2e-7c2b-4b8e-9f3a-1d2c3b4a5f60" },
  });
}

const declaration = (version: number, resources: unknown[]) => JSON.stringify({ type: "declaration", declaration: { version, resources } });
const site = { type: "directory", id: "site", path: "/srv", mode: "0755" };
const index = { type: "file", id: "index", path: "/srv/index.html", content: "hello\n", mode: "0644" };

describe("link", () => {
  it("authenticates, applies a pushed declaration and reports what it owns", async () => {
    const { cp, host, rootDir, stateDir } = await setup((ws) => ws.send(declaration(1, [site, index])));
    await host.start();
    const report = await waitFor("a report of v1", () => cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 2));
    expect(report.owned.map((o) => o.id).sort()).toEqual(["index", "site"]);
    expect(report.errors).toEqual([]);
    expect(readFileSync(join(rootDir, "srv/index.html"), "utf8")).toBe("hello\n");
    expect(cp.auths[0]).toMatchObject({ nodeId: "6a1f0d2e-7c2b-4b8e-9f3a-1d2c3b4a5f60", declarationVersion: 0, hostVersion: "test" });
    // Kept durably before it was applied: the next start holds it.
    expect(JSON.parse(readFileSync(join(stateDir, "declaration.json"), "utf8")).version).toBe(1);
    await waitFor(
      "status.json",
      () => existsSync(join(stateDir, "status.json")) && JSON.parse(readFileSync(join(stateDir, "status.json"), "utf8")).owned === 2,
    );
    expect(JSON.parse(readFileSync(join(stateDir, "status.json"), "utf8"))).toMatchObject({ state: "enrolled", connected: true, declarationVersion: 1 });
  });

  it("sends a report's newer fields only to a control plane that says it reads them", async () => {
    const older = await setup((ws) => ws.send(declaration(1, [site])), 45_000, "");
    await older.host.start();
    const plain = await waitFor("a report of v1", () => older.cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1));
    expect(plain).not.toHaveProperty("origin");
    expect(plain).not.toHaveProperty("storeGeneration");

    const current = await setup((ws) => ws.send(declaration(1, [site])));
    await current.host.start();
    const full = await waitFor("a report of v1", () => current.cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1));
    expect(full.origin).toMatchObject({ sequence: expect.any(Number) });
    expect(full.storeGeneration).toEqual(expect.any(Number));
  });

  it("survives garbage frames, reports a rejected declaration and ignores an older one", async () => {
    const { cp, host, rootDir } = await setup((ws) => ws.send(declaration(1, [site])));
    await host.start();
    await waitFor("v1 applied", () => cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1));
    const ws = cp.sockets[0]!;
    ws.send("not json {");
    ws.send(JSON.stringify({ type: "surprise" }));
    ws.send(Buffer.from([0, 1, 2, 3]));
    ws.send(declaration(2, [{ type: "file", id: "bad", path: "relative/path", content: "x" }]));
    const rejected = await waitFor("a rejection", () => cp.reports.find((r) => r.rejectedVersion === 2));
    expect(rejected.declarationVersion).toBe(1);
    expect(rejected.errors).toEqual([
      { id: null, message: expect.stringMatching(/declaration v2 rejected: declaration\.resources\.0\.path: must be absolute/) },
    ]);
    ws.send(declaration(3, [site, index]));
    await waitFor("v3 applied", () => cp.reports.find((r) => r.declarationVersion === 3 && r.owned.length === 2 && r.rejectedVersion === undefined));
    ws.send(declaration(2, []));
    // A reconcile asked for after it, on the same link: once it is reported, the older declaration was seen (and ignored).
    const before = cp.reports.length;
    cp.reconcile({ reason: "after the older declaration" });
    await waitFor("the report asked for", () => cp.reports.slice(before).find((r) => r.declarationVersion === 3));
    await host.idle();
    expect(existsSync(join(rootDir, "srv/index.html"))).toBe(true);
    expect(host.connected).toBe(true);
  });

  it("sends the held declaration version on reconnect and reconnects after silence", async () => {
    const clock = new ManualClock();
    const { cp, host } = await setup(
      (ws, auth) => {
        if (auth.declarationVersion < 1) ws.send(declaration(1, [site]));
      },
      45_000,
      undefined,
      clock,
    );
    await host.start();
    await waitFor("a report of v1", () => cp.reports.find((r) => r.declarationVersion === 1));
    expect(cp.auths).toHaveLength(1);
    // The fake never pings: 45 s of silence on the clock, and the host gives up on the link and comes back
    // (the clock moves on at each look: the reconnect's backoff is on it too).
    // The check comes before the advance: the server counts the auth before the host holds the link.
    await waitFor("a second connection", () => {
      if (cp.auths.length >= 2) return true;
      clock.advance(45_000);
      return false;
    });
    expect(cp.auths[1]!.declarationVersion).toBe(1);
    await waitFor("a report after reconnecting", () => cp.reports.filter((r) => r.declarationVersion === 1).length >= 2);
  });

  it("keeps reconciling locally while the control plane refuses the link as revoked", async () => {
    const { cp, host, stateDir } = await setup(() => undefined);
    cp.refuse = "node-revoked";
    await host.start();
    // Refused, waited (revokedRetryMs) and refused again: never linked.
    await waitFor("a second refused attempt", () => cp.refused >= 2);
    await host.idle();
    expect(cp.auths).toEqual([]);
    const status = await waitFor("status.json saying revoked, after a reconcile", () => {
      const s = existsSync(join(stateDir, "status.json")) && JSON.parse(readFileSync(join(stateDir, "status.json"), "utf8"));
      return s?.state === "revoked" && s.lastReconcileResult !== null && s;
    });
    // refused (403): the host says it is revoked, and still reconciles its last declaration
    expect(status).toMatchObject({ state: "revoked", connected: false, lastReconcileResult: "ok" });
    cp.refuse = null;
    await waitFor("the link once refusal ends", () => cp.auths.length >= 1, 3000);
  });
});
