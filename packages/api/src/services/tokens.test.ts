// Tokens as the admin sees them: a page lists each token's status and the nodes that enrolled with it,
// in a number of statements that does not grow with the page.
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { countingDb } from "../testing/counting-db";
import { useServiceDeps } from "../testing/service-deps";
import { enrolWithToken } from "../testing/test-nodes";
import { createToken, listTokens, NODES_PER_TOKEN, revokeToken } from "./tokens";

describe.each(testEngines())("token list on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const issue = (maxUses = 1, ttlSeconds = 3600) => createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses, ttlSeconds } });
  const enrolWith = async (token: string) => (await enrolWithToken(deps, token)).nodeId;

  it("lists each token with its own nodes and status, newest first", async () => {
    const many = await issue(NODES_PER_TOKEN + 5);
    const manyNodes = [];
    for (let i = 0; i < NODES_PER_TOKEN + 5; i++) manyNodes.push(await enrolWith(many.token));
    const one = await issue();
    const oneNode = await enrolWith(one.token);
    const unused = await issue();
    const revoked = await issue();
    await revokeToken(deps, { actor: "test", id: revoked.id });
    const expiring = await issue(1, 60);

    const { items, total } = await listTokens(deps, { limit: 10 });
    expect(total).toBe(5);
    expect(items.map((t) => t.id)).toEqual([expiring.id, revoked.id, unused.id, one.id, many.id]);
    const byId = new Map(items.map((t) => [t.id, t]));
    expect(byId.get(one.id)).toMatchObject({ status: "used", uses: 1, nodes: [{ id: oneNode, name: expect.any(String) }] });
    expect(byId.get(unused.id)).toMatchObject({ status: "unused", nodes: [] });
    expect(byId.get(revoked.id)).toMatchObject({ status: "revoked", nodes: [] });
    const listedMany = byId.get(many.id)!;
    expect(listedMany.status).toBe("used");
    expect(listedMany.nodes.map((n) => n.id)).toEqual(manyNodes.slice(0, NODES_PER_TOKEN));
    expect(listedMany.createdAt).toBeInstanceOf(Date);
    expect(listedMany.expiresAt).toBeInstanceOf(Date);

    // Status is judged on the injected clock: a minute on, the 60 s token has expired.
    const later = { ...deps, now: () => new Date(Date.now() + 61_000) };
    expect((await listTokens(later, {})).items.find((t) => t.id === expiring.id)?.status).toBe("expired");
  });

  it("pages without a query per token", async () => {
    const statements = async (limit: number) => {
      const counted = countingDb(deps.db);
      const page = await listTokens({ ...deps, db: counted.db }, { limit });
      expect(page.items).toHaveLength(Math.min(limit, page.total));
      return counted.count();
    };
    for (let i = 0; i < 30; i++) await enrolWith((await issue()).token);
    expect(await statements(30)).toBe(await statements(1));
  });
});
