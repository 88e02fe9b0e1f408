// One host cannot exhaust the gateway (issue 10, items 8 and 9): a host that floods
// its link with large, ever-changing reports is paused, the control plane's memory
// stays bounded, its last report is still stored, the audit log gets at most one
// event per stored report within a per-node budget, and another host is unaffected.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { connectFake, enrolFake, inventory, nextClose, profile } from "../harness/link";
import { sleep, waitFor } from "../harness/wait";

const engine = engines()[0]!;
const sha = (n: number) => n.toString(16).padStart(64, "0");

function reportFrame(seq: number, tag: string, drifts: number) {
  return JSON.stringify({
    type: "report",
    seq,
    report: {
      declarationVersion: 0,
      owned: [],
      drift: Array.from({ length: drifts }, (_, i) => ({
        id: `r${i}`,
        type: "file",
        declared: sha(i),
        observed: sha(i + 1),
        description: `${tag} ${"x".repeat(110)}`,
        corrected: false,
      })),
      errors: [],
      skipped: [],
      storeLost: false,
      reconciledAt: new Date().toISOString(),
    },
  });
}

function ackOf(ws: WebSocket, seq: number): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const frame = JSON.parse(data.toString());
      if (frame.type === "ack" && frame.seq >= seq) {
        ws.off("message", onMessage);
        resolve();
      }
    };
    ws.on("message", onMessage);
  });
}

describe(`a host flooding its link (${engine})`, () => {
  let cp: ControlPlane;
  const client = () => api(cp.url);

  beforeAll(async () => {
    // The link-event budget is tested below with a reconnect loop faster than the per-node connect limit allows.
    cp = await ControlPlane.start({ engine, env: { MESH_LINK_CONNECTS_PER_MINUTE: "1000" } });
  });
  afterAll(() => cp?.dispose());

  it("keeps the control plane's memory bounded (pausing the link when frames come faster than they are handled), loses not its last report, and leaves other hosts alone", async () => {
    const { token: tokenA } = await client().mutate("token.create", {});
    const { token: tokenB } = await client().mutate("token.create", {});
    const flooder = await enrolFake(cp.url, tokenA);
    const normal = await enrolFake(cp.url, tokenB);
    const a = await connectFake(cp.url, flooder);
    const closed: number[] = [];
    a.on("close", (code) => closed.push(code));

    // Enough that a gateway holding the flood would grow by its size (the old one did, and never finished).
    const frames = 800;
    const size = Buffer.byteLength(reportFrame(0, "flood-0000", 2500));
    expect(size).toBeGreaterThan(800_000);
    expect(size).toBeLessThan(1_000_000);

    const baseline = cp.rssKb();
    let peak = baseline;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, cp.rssKb());
      } catch {
        /* the control plane is gone: the test fails on its own */
      }
    }, 50);
    let normalAcked = false;
    try {
      // Built once, so the gateway, not this sender, is the slower side: consecutive frames differ.
      const bodies = Array.from({ length: 16 }, (_, i) => reportFrame(999_999, `flood-${String(i).padStart(4, "0")}`, 2500));
      for (let seq = 1; seq <= frames; seq++) {
        a.send(bodies[seq % bodies.length]!.replace('"seq":999999', `"seq":${seq}`));
        // A sender that respects its own socket's backpressure: what the gateway's pause pushes back on.
        while (a.bufferedAmount > 16 << 20) await sleep(5);
        if (seq === 20) {
          // Meanwhile an ordinary host connects, reports and gets its ack.
          const b = await connectFake(cp.url, normal);
          const acked = ackOf(b, 1);
          b.send(reportFrame(1, "normal", 1));
          void acked.then(() => {
            normalAcked = true;
            b.close();
          });
        }
      }
      // The host's last word after the flood, sent while earlier ones may still wait for their window.
      const finalAck = ackOf(a, frames + 1);
      a.send(reportFrame(frames + 1, "final", 3));
      await finalAck;
    } finally {
      clearInterval(sampler);
    }
    const grewMb = (peak - baseline) / 1024;
    console.log(
      `control plane RSS: baseline ${Math.round(baseline / 1024)} MB, peak ${Math.round(peak / 1024)} MB (+${Math.round(grewMb)} MB) over ${frames} frames of ${Math.round(size / 1024)} KB`,
    );
    // Bounded means not holding the flood: well under what was sent (the peak also holds GC slack; the old gateway
    // queued every frame and never finished).
    const sentMb = (frames * size) / (1 << 20);
    expect(grewMb).toBeLessThan(sentMb * 0.6);
    expect(closed).toEqual([]);

    const node = await client().query("node.get", { id: flooder.nodeId });
    expect(node.report.drift.map((d: { description: string }) => d.description.split(" ")[0])).toEqual(["final", "final", "final"]);
    const driftEvents = await client().query("event.list", { nodeId: flooder.nodeId, action: "node.drift", limit: 200 });
    expect(driftEvents.items.length).toBeGreaterThan(0);
    expect(driftEvents.items.length).toBeLessThanOrEqual(20);

    await waitFor("the ordinary host's ack", () => normalAcked);
    const other = await client().query("node.get", { id: normal.nodeId });
    expect(other.report.drift[0].description).toMatch(/^normal /);
    a.close();
  }, 180_000);

  it("applies a burst of changing facts a few times, not once per frame, and keeps the last", async () => {
    const { token } = await client().mutate("token.create", {});
    const host = await enrolFake(cp.url, token);
    const ws = await connectFake(cp.url, host);
    const frames = 100;
    for (let i = 1; i <= frames; i++)
      ws.send(JSON.stringify({ type: "facts", profile: { ...profile("f".repeat(32)), memoryBytes: 1_000_000 + i }, inventory }));
    const node = await waitFor(
      "the last facts applied",
      async () => {
        const n = await client().query("node.get", { id: host.nodeId });
        return n.profile.memoryBytes === 1_000_000 + frames ? n : null;
      },
      60_000,
    );
    expect(node.profile.memoryBytes).toBe(1_000_000 + frames);
    const applied = await client().query("event.list", { nodeId: host.nodeId, action: "node.facts", limit: 200 });
    // Each frame used to be its own write and recompile; now the first goes at once and the rest as one when its window opens.
    expect(applied.items.length).toBeLessThanOrEqual(5);
    ws.close();
  }, 120_000);

  it("audits a host reconnecting in a loop within a per-node budget of link events", async () => {
    const { token } = await client().mutate("token.create", {});
    const host = await enrolFake(cp.url, token);
    for (let i = 0; i < 40; i++) {
      const ws = await connectFake(cp.url, host);
      const closed = nextClose(ws);
      ws.close();
      await closed;
    }
    // Every link change still reaches the node's state; the audit stops at the budget and says how many it left out.
    await waitFor("the last disconnect", async () => (await client().query("node.get", { id: host.nodeId })).state === "disconnected");
    const connects = await client().query("event.list", { nodeId: host.nodeId, action: "node.connect", limit: 200 });
    expect(connects.items.length).toBe(20);
    const disconnects = await client().query("event.list", { nodeId: host.nodeId, action: "node.disconnect", limit: 200 });
    expect(disconnects.items.length).toBeLessThanOrEqual(20);
  }, 120_000);
});
