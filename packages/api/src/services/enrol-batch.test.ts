// Group commit of enrolments: concurrent enrolments share a transaction (their nodes carry one
// created_at, the transaction's start) and give the rows, events, answers and token counts that
// the same enrolments made one at a time give; a batch that cannot take an enrolment, or fails,
// answers each request as it would have been answered alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import { createTestDatabase, testEngines } from "@mesh/db/testing";
import { CHANNELS, declarations, enrolmentTokens, events, nodes, type Database } from "@mesh/db";
import type { EnrolRequest } from "@mesh/protocol";
import type { Deps } from "../deps";
import type { MeshError } from "../errors";
import { createToken, revokeToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { seedClashingRoles } from "../testing/clashing-roles";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";

const inventory = emptyInventory();

describe.each(testEngines())("enrolment group commit on %s", (engine) => {
  let deps: Deps;
  let database: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await createTestDatabase(engine);
    database = t.database;
    drop = () => t.drop();
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
    await seedClashingRoles(deps);
  });
  afterAll(() => drop?.());

  const token = async (labels: Record<string, string> = {}, maxUses = 1) =>
    createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels, maxUses } });
  const request = (tokenText: string, machineId: string = crypto.randomUUID(), over: Partial<EnrolRequest> = {}): EnrolRequest => ({
    token: tokenText,
    publicKey: testKeyPair().publicKey,
    profile: testProfile(machineId),
    inventory,
    ...over,
  });

  /** What a user sees of the nodes a token made, without what differs between two runs (ids, keys, times). */
  async function madeWith(tokenIds: string[]) {
    const rows = await deps.db.select().from(nodes).where(inArray(nodes.tokenId, tokenIds)).orderBy(asc(nodes.name));
    const ids = rows.map((r) => r.id);
    const decls = ids.length ? await deps.db.select().from(declarations).where(inArray(declarations.nodeId, ids)) : [];
    const evs = ids.length ? await deps.db.select().from(events).where(inArray(events.nodeId, ids)).orderBy(asc(events.id)) : [];
    return rows.map((r) => ({
      name: r.name,
      state: r.state,
      labels: r.labels,
      declaredVersion: r.declaredVersion,
      conflicts: r.conflicts,
      inventoryHash: r.inventoryHash,
      enrolledFrom: r.enrolledFrom,
      declarations: decls
        .filter((d) => d.nodeId === r.id)
        .map((d) => ({ version: d.version, hash: d.hash, roles: d.roles, roleVersions: d.roleVersions, final: d.final })),
      events: evs
        .filter((e) => e.nodeId === r.id)
        .map((e) => ({
          actor: e.actor.startsWith("token:") ? "token" : e.actor,
          action: e.action,
          result: e.result,
          data: { ...(e.data as object), machineId: undefined },
        })),
    }));
  }

  /** How many transactions made these nodes: a transaction's now() is its start, shared by every row it inserts. */
  async function transactionsThatMade(tokenIds: string[]): Promise<number> {
    const [row] = await deps.db
      .select({ n: sql<number>`count(distinct ${nodes.createdAt})::int` })
      .from(nodes)
      .where(inArray(nodes.tokenId, tokenIds));
    return row!.n;
  }

  it("makes, for concurrent enrolments, the rows, events and answers that the same enrolments made one at a time make", async () => {
    const kinds: Array<Record<string, string>> = [{}, { tier: "web" }, { tier: "db" }, { clash: "yes" }];
    const n = 24;
    const sequential = await Promise.all(Array.from({ length: n }, (_, i) => token(kinds[i % kinds.length]!)));
    const concurrent = await Promise.all(Array.from({ length: n }, (_, i) => token(kinds[i % kinds.length]!)));
    const name = (i: number) => `host-${String(i).padStart(2, "0")}`;
    const seqAnswers = [];
    for (let i = 0; i < n; i++) {
      seqAnswers.push(
        await enrolNode(deps, request(sequential[i]!.token, crypto.randomUUID(), { profile: testProfile(crypto.randomUUID(), { hostname: name(i) }) }), {
          address: "10.0.0.1",
        }),
      );
    }
    const conAnswers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        enrolNode(deps, request(concurrent[i]!.token, crypto.randomUUID(), { profile: testProfile(crypto.randomUUID(), { hostname: name(i) }) }), {
          address: "10.0.0.1",
        }),
      ),
    );
    const strip = (a: { nodeId: string }) => ({ ...a, nodeId: typeof a.nodeId });
    expect(conAnswers.map(strip)).toEqual(seqAnswers.map(strip));
    const seqRows = await madeWith(sequential.map((t) => t.id));
    const conRows = await madeWith(concurrent.map((t) => t.id));
    expect(conRows).toHaveLength(n);
    expect(conRows).toEqual(seqRows);
    // Both kinds of first declaration are there: compiled (version 1) and conflicted (version 0).
    expect(new Set(conRows.map((r) => r.declaredVersion))).toEqual(new Set([0, 1]));
    // Every token used once, in both runs.
    const uses = await deps.db
      .select({ id: enrolmentTokens.id, uses: enrolmentTokens.uses })
      .from(enrolmentTokens)
      .where(
        inArray(
          enrolmentTokens.id,
          [...sequential, ...concurrent].map((t) => t.id),
        ),
      );
    expect(uses.every((u) => u.uses === 1)).toBe(true);
    // One at a time: a transaction each. Concurrently: they went together.
    expect(await transactionsThatMade(sequential.map((t) => t.id))).toBe(n);
    // The design's bound: at most two flights leave before the rest gather (maxInFlight 2, no window),
    // then a transaction per BATCH_MAX (200): ceil(n / 200) + 2.
    expect(await transactionsThatMade(concurrent.map((t) => t.id))).toBeLessThanOrEqual(Math.ceil(n / 200) + 2);
  });

  it("tells each node's gateway after commit: a declaration notice per compiled node, a node notice per conflicted one", async () => {
    const declared: string[] = [];
    const changed: string[] = [];
    const stopD = await database.bus.subscribe(CHANNELS.declaration, (p) => declared.push(p));
    const stopN = await database.bus.subscribe(CHANNELS.node, (p) => changed.push(p));
    const plain = await Promise.all(Array.from({ length: 6 }, () => token()));
    const clash = await Promise.all(Array.from({ length: 3 }, () => token({ clash: "yes" })));
    const answers = await Promise.all([...plain, ...clash].map((t) => enrolNode(deps, request(t.token))));
    const want = answers.slice(0, 6).map((a) => a.nodeId);
    const wantConflicted = answers.slice(6).map((a) => a.nodeId);
    for (let i = 0; i < 200 && !(want.every((id) => declared.includes(id)) && wantConflicted.every((id) => changed.includes(id))); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(declared).toEqual(expect.arrayContaining(want));
    expect(changed).toEqual(expect.arrayContaining(wantConflicted));
    expect(declared.filter((id) => wantConflicted.includes(id))).toEqual([]);
    await stopD();
    await stopN();
  });

  it("admits exactly the uses a token has left, whatever the number enrolling with it at once, and lets the rest of the batch through", async () => {
    const shared = await token({}, 5);
    await enrolNode(deps, request(shared.token));
    await enrolNode(deps, request(shared.token));
    const plenty = await token({}, 100);
    const own = await Promise.all(Array.from({ length: 5 }, () => token()));
    const results = await Promise.allSettled([
      ...Array.from({ length: 12 }, () => enrolNode(deps, request(shared.token))),
      ...Array.from({ length: 8 }, () => enrolNode(deps, request(plenty.token))),
      ...own.map((t) => enrolNode(deps, request(t.token))),
    ]);
    const viaShared = results.slice(0, 12);
    expect(viaShared.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    for (const r of viaShared) if (r.status === "rejected") expect((r.reason as MeshError).code).toBe("TOKEN_USED");
    expect(results.slice(12).every((r) => r.status === "fulfilled")).toBe(true);
    const [row] = await deps.db.select({ uses: enrolmentTokens.uses }).from(enrolmentTokens).where(eq(enrolmentTokens.id, shared.id));
    expect(row!.uses).toBe(5);
    expect(await deps.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.tokenId, shared.id))).toHaveLength(5);
    const [many] = await deps.db.select({ uses: enrolmentTokens.uses }).from(enrolmentTokens).where(eq(enrolmentTokens.id, plenty.id));
    expect(many!.uses).toBe(8);
    // The others still went together.
    expect(await transactionsThatMade([plenty.id, ...own.map((t) => t.id)])).toBeLessThanOrEqual(Math.ceil(13 / 200) + 2);
  });

  it("answers two enrolments of one machine in one batch as one after the other: the first enrols, the second claims its node", async () => {
    const t = await token({}, 10);
    const machineId = crypto.randomUUID();
    const others = Array.from({ length: 4 }, () => enrolNode(deps, request(t.token)));
    const [first, second] = await Promise.all([enrolNode(deps, request(t.token, machineId)), enrolNode(deps, request(t.token, machineId))]);
    await Promise.all(others);
    expect(first.awaitingApproval).toBeUndefined();
    expect(second).toMatchObject({ nodeId: first.nodeId, awaitingApproval: true });
    const rows = await deps.db.select().from(nodes).where(eq(nodes.machineId, machineId));
    expect(rows.map((r) => r.state).sort()).toEqual(["disconnected", "pending"]);
    expect(rows.find((r) => r.state === "pending")!.replacesNodeId).toBe(first.nodeId);
    const [row] = await deps.db.select({ uses: enrolmentTokens.uses }).from(enrolmentTokens).where(eq(enrolmentTokens.id, t.id));
    expect(row!.uses).toBe(6);
  });

  it("answers a whole batch with the database's own failure at once, without trying each enrolment again", async () => {
    const tokens = await Promise.all(Array.from({ length: 6 }, () => token()));
    const machineId = crypto.randomUUID();
    let transactions = 0;
    // The database refuses every transaction (as when it is unreachable) but still reads the tokens.
    const failing = new Proxy(deps.db, {
      get(target, prop, receiver) {
        if (prop === "transaction") {
          return async () => {
            transactions++;
            throw Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" });
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const broken: Deps = { ...deps, db: failing };
    // The last one is a second enrolment of the first one's machine: it would have waited for the batch.
    const results = await Promise.allSettled(tokens.map((t, i) => enrolNode(broken, request(t.token, i === 0 || i === 5 ? machineId : crypto.randomUUID()))));
    expect(results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "ok"))).toEqual(Array(6).fill("connection refused"));
    expect(transactions).toBe(1);
  });

  it("answers every bad request of a batch with its own refusal and enrols the others, also when one fails the batch's statements", async () => {
    const good = await Promise.all(Array.from({ length: 6 }, () => token()));
    const revoked = await token();
    await revokeToken(deps, { actor: "test", id: revoked.id });
    const used = await token();
    await enrolNode(deps, request(used.token));
    const poisoned = await token();
    const badKey = await token();
    const [before] = await deps.db.select({ id: sql<number>`coalesce(max(${events.id}), 0)` }).from(events);
    const results = await Promise.allSettled([
      enrolNode(deps, request(good[0]!.token)),
      enrolNode(deps, request("abcdef.000000000000000000000000")),
      enrolNode(deps, request(good[1]!.token)),
      enrolNode(deps, request("not a token")),
      enrolNode(deps, request(revoked.token)),
      enrolNode(deps, request(badKey.token, crypto.randomUUID(), { publicKey: Buffer.alloc(44).toString("base64") })),
      enrolNode(deps, request(good[2]!.token)),
      enrolNode(deps, request(used.token)),
      enrolNode(deps, request(good[3]!.token)),
      // A NUL byte: Postgres refuses it in text and jsonb, so the batch's INSERT fails and its enrolments go one by one.
      enrolNode(deps, request(poisoned.token, crypto.randomUUID(), { profile: testProfile(crypto.randomUUID(), { hostname: "nul\u0000host" }) })),
      enrolNode(deps, request(good[4]!.token)),
      enrolNode(deps, request(good[5]!.token)),
    ]);
    const code = (i: number) => (results[i]!.status === "rejected" ? (((results[i] as PromiseRejectedResult).reason as MeshError).code ?? "error") : "ok");
    expect(Array.from({ length: results.length }, (_, i) => code(i))).toEqual([
      "ok",
      "TOKEN_UNKNOWN",
      "ok",
      "TOKEN_MALFORMED",
      "TOKEN_REVOKED",
      "BAD_INPUT",
      "ok",
      "TOKEN_USED",
      "ok",
      "error",
      "ok",
      "ok",
    ]);
    // Nothing of the failed one was kept, and its token was not used.
    const [p] = await deps.db.select({ uses: enrolmentTokens.uses }).from(enrolmentTokens).where(eq(enrolmentTokens.id, poisoned.id));
    expect(p!.uses).toBe(0);
    expect(
      await deps.db
        .select({ id: nodes.id })
        .from(nodes)
        .where(
          inArray(
            nodes.tokenId,
            good.map((t) => t.id),
          ),
        ),
    ).toHaveLength(6);
    // Refusals are audited one per request, as before.
    const refused = await deps.db
      .select()
      .from(events)
      .where(and(eq(events.action, "enrol.refused"), gt(events.id, Number(before!.id))));
    expect(refused.map((e) => (e.data as { reason: string }).reason).sort()).toEqual([
      "BAD_INPUT",
      "TOKEN_MALFORMED",
      "TOKEN_REVOKED",
      "TOKEN_UNKNOWN",
      "TOKEN_USED",
    ]);
  });
});
