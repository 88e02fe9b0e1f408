// Anyone can be refused enrolment: refusals are budgeted in the audit log per address key,
// and every address in one IPv6 /64 counts as one address for the failure limits too; a token
// expires on the control plane's clock (Deps.now), to the millisecond.
import { describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { events, nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "../services/tokens";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { createEnrolLimits, handleEnrol, REFUSED_EVENTS_PER_HOUR } from "./enrol-handler";
import { useServiceDeps } from "../testing/service-deps";

describe.each(testEngines())("enrolment refusals on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const wrongToken = async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: {} });
    return token.slice(0, -1) + (token.endsWith("a") ? "b" : "a");
  };
  const enrolRequest = (token: string) =>
    new Request("http://cp/api/enrol", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() }),
    });
  const enrol = (token: string, address: string, limits: ReturnType<typeof createEnrolLimits>) => handleEnrol(deps, enrolRequest(token), { address, limits });

  it("writes at most a budget of enrol.refused events per address key, the next one counting those left out", async () => {
    const limits = createEnrolLimits(1000, 1000);
    const token = await wrongToken();
    // Every request from another address of one /64: one address key.
    for (let i = 0; i < 25; i++) expect((await enrol(token, `2001:db8:a:b::${(i + 1).toString(16)}`, limits)).status).toBe(401);
    let refused = await deps.db.select().from(events).where(eq(events.action, "enrol.refused"));
    expect(refused).toHaveLength(REFUSED_EVENTS_PER_HOUR);
    // Another address key has its own budget.
    expect((await enrol(token, "192.0.2.10", limits)).status).toBe(401);
    refused = await deps.db.select().from(events).where(eq(events.action, "enrol.refused"));
    expect(refused).toHaveLength(REFUSED_EVENTS_PER_HOUR + 1);
  });

  it("counts every address of one IPv6 /64 as one address for the failure backoff", async () => {
    const limits = createEnrolLimits(5, 1000);
    const token = await wrongToken();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await enrol(token, `2001:db8:c:d:${(i + 1).toString(16)}::1`, limits)).status);
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(statuses.slice(6)).toEqual([429, 429]);
    // Another /64 is not held.
    expect((await enrol(token, "2001:db8:c:e::1", limits)).status).toBe(401);
  });

  it("refuses a token once its expiry passes on the control plane's clock (401 TOKEN_EXPIRED), and creates no node", async () => {
    const issued = Date.parse("2026-03-01T12:00:00Z");
    const at = (ms: number): Deps => ({ ...deps, now: () => new Date(ms) });
    const { token, expiresAt } = await createToken(at(issued), { actor: "test", publicUrl: "http://cp", input: { ttlSeconds: 60, maxUses: 2 } });
    expect(expiresAt).toBe(new Date(issued + 60_000).toISOString());
    const nodeCount = async () => (await deps.db.select({ n: count() }).from(nodes))[0]!.n;
    const before = await nodeCount();
    const expired = await handleEnrol(at(issued + 60_000), enrolRequest(token), { address: "192.0.2.20", limits: createEnrolLimits() });
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ error: "TOKEN_EXPIRED" });
    expect(await nodeCount()).toBe(before);
    // A millisecond sooner it was still good.
    const inTime = await handleEnrol(at(issued + 59_999), enrolRequest(token), { address: "192.0.2.21", limits: createEnrolLimits() });
    expect(inTime.status).toBe(201);
  });
});
