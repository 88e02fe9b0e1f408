// Frame handling on a held link, through a real gateway and database: a report is stored and acked,
// and a frame that is not a host frame (not JSON, not text, the wrong shape, too big) closes the link
// with a code that says which, never a silent drop.
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { eq } from "drizzle-orm";
import { latestReports } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import { CloseCode, LIMITS } from "@mesh/protocol";
import type { Deps } from "../deps";
import type { ChangeBus } from "@mesh/db";
import { testReport } from "../testing/host-facts";
import { enrolRawHosts, openRawLink, sendReport, startTestGateway } from "../testing/raw-hosts";
import { useServiceDeps } from "../testing/service-deps";

const closed = (ws: WebSocket) =>
  new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: String(reason) })));

describe.each(testEngines())("frames on a link on %s", (engine) => {
  let deps: Deps;
  let bus: ChangeBus;
  useServiceDeps(engine, (d, t) => ((deps = d), (bus = t.database.bus)));

  /** A gateway with one host linked to it; the test closes both. */
  const linked = async () => {
    const served = await startTestGateway(deps, bus, { reportIntervalMs: 0 });
    const [host] = await enrolRawHosts(deps, 1);
    return { served, host: host!, ws: await openRawLink(served.base, host!) };
  };

  it("stores a report frame and acks its seq", async () => {
    const { served, host, ws } = await linked();
    try {
      expect(await sendReport(ws, 7, testReport(1, { errors: [{ id: "r", message: "failed" }] }))).toBe(7);
      const [stored] = await deps.db.select().from(latestReports).where(eq(latestReports.nodeId, host.nodeId));
      expect(stored?.declarationVersion).toBe(1);
    } finally {
      ws.terminate();
      await served.close();
    }
  });

  it.each([
    ["text that is not JSON", "{not json", CloseCode.badFrame, /^bad frame: frame is not JSON text$/],
    ["a binary frame", Buffer.from([1, 2, 3]), CloseCode.badFrame, /^bad frame: frame is not JSON text$/],
    ["JSON of an unknown type", JSON.stringify({ type: "nonsense" }), CloseCode.badFrame, /^bad frame: .*type/],
    ["a report missing its fields", JSON.stringify({ type: "report", seq: 1, report: { declarationVersion: 1 } }), CloseCode.badFrame, /^bad frame: .*report/],
    ["a frame past the size limit", "x".repeat(LIMITS.hostFrameBytes + 1), CloseCode.tooBig, /^$/], // the code says it all: ws sends 1009 without a reason,
  ])("closes the link on %s, with a code that says so", async (_what, frame, code, reason) => {
    const { served, ws } = await linked();
    try {
      const close = closed(ws);
      ws.send(frame);
      const got = await close;
      expect(got.code).toBe(code);
      expect(got.reason).toMatch(reason);
    } finally {
      ws.terminate();
      await served.close();
    }
  });
});
