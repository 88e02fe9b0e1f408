// Property test: the set-based fleet compile gives every node the declaration the old
// per-node compiler gave it. A seeded random fleet and random role changes are applied to
// two identical databases; one is compiled by recompileFleet (through upsertRole/deleteRole),
// the other by the old loop kept below as the oracle; after every round they must agree.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, inArray, sql } from "drizzle-orm";
import pino from "pino";
import { CHANNELS, declarationBodies, declarations, events, nodes, roles as rolesTable, type Db, type DbOrTx } from "@mesh/db";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { Role, type RoleInput } from "@mesh/protocol";
import type { Deps } from "../deps";
import { compileDeclaration } from "../compile/compile-declaration";
import { COMPILABLE_STATES, loadRoles, lockCompiler } from "./recompile-node";
import { appendDeclaration, DECLARATION_HISTORY_PER_NODE, pruneNodeHistory } from "./declaration-store";
import { deleteRole, upsertRole } from "./roles";
import { testProfile, emptyInventory } from "../testing/host-facts";

/** mulberry32: a small seeded PRNG, so a failure replays exactly. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(list: readonly T[]): T => list[int(0, list.length - 1)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof prng>;

const ENVS = ["prod", "staging", "dev"] as const;
const APPS = ["web", "db", "cache", "queue"] as const;
const STATES = ["enrolled", "enrolled", "disconnected", "disconnected", "pending", "retiring", "retired", "revoked"] as const;
const ROLE_NAMES = ["base", "web", "db", "monitoring", "big", "edge", "legacy", "backup", "tuning", "audit"] as const;

function randomLabels(rng: Rng): Record<string, string> {
  const labels: Record<string, string> = {};
  if (rng.chance(0.9)) labels.env = rng.pick(ENVS);
  if (rng.chance(0.8)) labels.app = rng.pick(APPS);
  if (rng.chance(0.5)) labels.tier = String(rng.int(1, 4));
  return labels;
}

function randomSelector(rng: Rng): RoleInput["selector"] {
  const selector: { labels?: Record<string, unknown>; profile?: Record<string, unknown> } = {};
  const kind = rng.int(0, 5);
  if (kind === 0) return {}; // every node
  if (kind <= 2) selector.labels = { env: rng.chance(0.5) ? rng.pick(ENVS) : { in: [rng.pick(ENVS), rng.pick(ENVS)] } };
  if (kind === 3) selector.labels = { app: rng.pick(APPS), ...(rng.chance(0.5) ? { tier: { gte: rng.int(1, 4) } } : {}) };
  if (kind === 4) selector.labels = { tier: { exists: rng.chance(0.5) } };
  if (kind === 5 || rng.chance(0.3)) selector.profile = rng.chance(0.5) ? { cpus: { gte: rng.pick([2, 4, 8, 16]) } } : { os: rng.pick(["debian", "ubuntu"]) };
  return selector as RoleInput["selector"];
}

/** Resources from a small shared pool: two roles picking the same id or path differently conflict. */
function randomResources(rng: Rng): RoleInput["resources"] {
  const count = rng.int(1, 3);
  const out: RoleInput["resources"] = [];
  const seen = new Set<number>();
  for (let i = 0; i < count; i++) {
    const n = rng.int(0, 9);
    // One role never declares a path twice (6 and 9 share /srv/6).
    if (seen.has(n) || (n === 9 && seen.has(6)) || (n === 6 && seen.has(9))) continue;
    seen.add(n);
    const id = `r${n}`;
    // Mostly one content per id (shared, no conflict); sometimes a variant (a conflict) or another id on the same path.
    if (n < 6) out.push({ type: "file", id, path: `/etc/mesh-test/${n}`, content: rng.chance(0.85) ? `content ${n}\n` : `variant ${rng.int(1, 2)}\n` });
    else if (n < 9) out.push({ type: "directory", id, path: `/srv/${n}` });
    else out.push({ type: "directory", id: `alias${rng.int(0, 1)}`, path: "/srv/6" });
  }
  return out;
}

function randomRole(rng: Rng, name: string): RoleInput {
  return { name, selector: randomSelector(rng), resources: randomResources(rng) };
}

/** The old per-node compiler (before issue 11), kept as the oracle: one node at a time. */
async function oracleRecompileNode(tx: DbOrTx, nodeId: string, roles: Role[]): Promise<void> {
  const [node] = await tx.select().from(nodes).where(eq(nodes.id, nodeId)).for("update");
  if (!node) throw new Error(`node ${nodeId} vanished`);
  if (!(COMPILABLE_STATES as readonly string[]).includes(node.state)) return;
  const compiled = compileDeclaration({ labels: node.labels, profile: node.profile as Record<string, unknown> }, roles);
  if (JSON.stringify(node.conflicts) !== JSON.stringify(compiled.conflicts))
    await tx.update(nodes).set({ conflicts: compiled.conflicts }).where(eq(nodes.id, nodeId));
  if (compiled.conflicts.length > 0) return; // keeps its last good declaration
  const [current] = await tx
    .select({ hash: declarations.hash })
    .from(declarations)
    .where(and(eq(declarations.nodeId, nodeId), eq(declarations.version, node.declaredVersion)));
  if (current && current.hash === compiled.hash) return;
  const version = node.declaredVersion + 1;
  await appendDeclaration(tx, { nodeId, version, hash: compiled.hash, resources: compiled.resources, roles: compiled.roles });
  await tx.update(nodes).set({ declaredVersion: version }).where(eq(nodes.id, nodeId));
  await pruneNodeHistory(tx, nodeId, version);
}

async function oracleRecompileFleet(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    await lockCompiler(tx);
    const roles = await loadRoles(tx);
    const ids = await tx
      .select({ id: nodes.id })
      .from(nodes)
      .where(inArray(nodes.state, [...COMPILABLE_STATES]))
      .orderBy(nodes.id);
    for (const { id } of ids) await oracleRecompileNode(tx, id, roles);
  });
}

/** Everything a node's declaration consists of, per node, for comparing two databases. */
async function fleetState(db: Db) {
  const rows = await db
    .select({ id: nodes.id, state: nodes.state, declaredVersion: nodes.declaredVersion, conflicts: nodes.conflicts })
    .from(nodes)
    .orderBy(nodes.id);
  const history = await db
    .select({
      nodeId: declarations.nodeId,
      version: declarations.version,
      hash: declarations.hash,
      roles: declarations.roles,
      resources: declarationBodies.resources,
    })
    .from(declarations)
    .innerJoin(declarationBodies, eq(declarationBodies.hash, declarations.hash))
    .orderBy(declarations.nodeId, declarations.version);
  return rows.map((n) => {
    const versions = history.filter((h) => h.nodeId === n.id);
    const current = versions.find((h) => h.version === n.declaredVersion);
    return {
      id: n.id,
      state: n.state,
      declaredVersion: n.declaredVersion,
      conflicts: n.conflicts,
      hash: current?.hash ?? null,
      roles: current?.roles ?? null,
      resources: current?.resources ?? null,
      versions: versions.map((h) => `${h.version}:${h.hash}`),
    };
  });
}

/** Seeds the same random fleet into a database: nodes (some with declarations) and roles. */
async function seedFleet(db: Db, seed: number): Promise<void> {
  const rng = prng(seed);
  const count = rng.int(50, 200);
  const oldBodies = [
    [{ type: "directory", id: "old", path: "/old" }],
    [{ type: "file", id: "r0", path: "/etc/mesh-test/0", content: "content 0\n", encoding: "utf8", onDrift: "correct" }],
  ];
  for (let i = 0; i < count; i++) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    const machineId = `m${seed}-${i}`;
    const profile = testProfile(machineId, { cpus: rng.pick([1, 2, 4, 8, 16]), os: rng.pick(["debian", "ubuntu"]) });
    const state = rng.pick(STATES);
    const conflicts = rng.chance(0.1) ? [{ key: "stale", roles: ["a", "b"] as [string, string] }] : [];
    await db
      .insert(nodes)
      .values({ id, name: `n${i}`, state, labels: randomLabels(rng), publicKey: `k${i}`, machineId, profile, inventory: emptyInventory(), conflicts });
    if (rng.chance(0.4)) {
      // Some nodes already hold declarations: a few versions, the current one any of the old bodies.
      const versions = rng.int(1, 3);
      for (let v = 1; v <= versions; v++) {
        const resources = rng.pick(oldBodies);
        await appendDeclaration(db, { nodeId: id, version: v, hash: `old-${JSON.stringify(resources).length}`, resources, roles: ["old"] });
      }
      await db.update(nodes).set({ declaredVersion: versions }).where(eq(nodes.id, id));
    }
  }
}

describe.each(testEngines())("set-based fleet compile on %s", (engine) => {
  let subject: TestDatabase;
  let oracle: TestDatabase;
  let deps: Deps;
  beforeAll(async () => {
    [subject, oracle] = await Promise.all([createTestDatabase(engine), createTestDatabase(engine)]);
    deps = { db: subject.database.db, log: pino({ level: "silent" }) };
  });
  afterAll(async () => {
    await subject?.drop();
    await oracle?.drop();
  });

  for (const seed of [11, 2026]) {
    it(`gives every node what the per-node compiler gives it (seed ${seed})`, async () => {
      const db = subject.database.db;
      const odb = oracle.database.db;
      for (const d of [db, odb]) {
        await d.delete(declarations);
        await d.delete(declarationBodies);
        await d.delete(nodes);
        await d.delete(rolesTable);
      }
      await seedFleet(db, seed);
      await seedFleet(odb, seed);
      const rng = prng(seed * 7 + 1);
      const present = new Set<string>();
      const rounds = 8;
      // The run must exercise what it claims to: new versions and conflicts.
      const seen = { changed: 0, conflicted: 0 };
      for (let round = 0; round < rounds; round++) {
        // A round: a few role changes (each one a fleet compile), and some labels changed with no compile.
        const changes = round === 0 ? rng.int(5, 10) : rng.int(1, 3);
        for (let c = 0; c < changes; c++) {
          const name = round === 0 ? ROLE_NAMES[c]! : rng.pick(ROLE_NAMES);
          const eventsBefore = (await db.select({ n: sql<number>`count(*)::int` }).from(events).where(eq(events.action, "declaration.compile")))[0]!.n;
          let result: { changed: number; conflicts: unknown[] };
          if (round > 0 && present.has(name) && rng.chance(0.3)) {
            result = await deleteRole(deps, { actor: "test", name });
            await odb.delete(rolesTable).where(eq(rolesTable.name, name));
            present.delete(name);
          } else {
            const role = Role.parse(randomRole(rng, name));
            // Random roles collide on purpose: the oracle compares what conflicted nodes get, so conflicts are confirmed.
            result = await upsertRole(deps, { actor: "test", input: role, confirmConflicts: true });
            await odb
              .insert(rolesTable)
              .values({ name: role.name, selector: role.selector, resources: role.resources, grants: role.grants })
              .onConflictDoUpdate({ target: rolesTable.name, set: { selector: role.selector, resources: role.resources, grants: role.grants } });
            present.add(name);
          }
          const before = await fleetState(odb);
          await oracleRecompileFleet(odb);
          const after = await fleetState(odb);
          // The API's figures match the oracle's: nodes given a new version, nodes in conflict.
          expect(result.changed).toBe(after.filter((n, i) => n.declaredVersion !== before[i]!.declaredVersion).length);
          expect(result.conflicts.length).toBe(
            after.filter((n) => (COMPILABLE_STATES as readonly string[]).includes(n.state) && n.conflicts.length > 0).length,
          );
          // One audit event for the whole change, and only when something changed.
          const eventsAfter = (await db.select({ n: sql<number>`count(*)::int` }).from(events).where(eq(events.action, "declaration.compile")))[0]!.n;
          expect(eventsAfter - eventsBefore).toBe(result.changed > 0 ? 1 : 0);
          expect(await fleetState(db)).toEqual(after);
          seen.changed += result.changed;
          seen.conflicted += result.conflicts.length;
        }
        for (let k = rng.int(0, 5); k > 0; k--) {
          const ids = await db.select({ id: nodes.id }).from(nodes).orderBy(nodes.id);
          const victim = rng.pick(ids).id;
          const labels = randomLabels(rng);
          for (const d of [db, odb]) await d.update(nodes).set({ labels }).where(eq(nodes.id, victim));
        }
      }
      expect(seen.changed).toBeGreaterThan(0);
      expect(seen.conflicted).toBeGreaterThan(0);
    });
  }
});

describe.each(testEngines())("fleet compile writes and notifications on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
    for (let i = 0; i < 5; i++) {
      const machineId = `w-${i}`;
      await t.database.db.insert(nodes).values({
        name: `w${i}`,
        state: "enrolled",
        labels: { app: "web" },
        publicKey: `k${i}`,
        machineId,
        profile: testProfile(machineId),
        inventory: emptyInventory(),
      });
    }
  });
  afterAll(() => t?.drop());
  const motd = (i: number): RoleInput => ({
    name: "motd",
    selector: { labels: { app: "web" } },
    resources: [{ type: "file", id: "motd", path: "/etc/motd", content: `round ${i}\n` }],
  });

  it("sends one notification for a change to many nodes, and records one event", async () => {
    const got: string[] = [];
    const unsubscribe = await t.database.bus.subscribe(CHANNELS.declaration, (p) => got.push(p));
    const result = await upsertRole(deps, { actor: "test", input: motd(0) });
    expect(result.changed).toBe(5);
    await expect.poll(() => got).toEqual(["*"]);
    const [event] = await deps.db.select().from(events).where(eq(events.action, "declaration.compile"));
    expect(event!.nodeId).toBeNull();
    expect(event!.data).toMatchObject({ changed: 5, unchanged: 0, conflicted: 0, bodies: 1, byHash: [{ roles: ["motd"], nodes: 5 }] });
    await unsubscribe();
  });

  it("names the node when a change reaches exactly one", async () => {
    const [one] = await deps.db.select({ id: nodes.id }).from(nodes).orderBy(nodes.id).limit(1);
    await deps.db
      .update(nodes)
      .set({ labels: { app: "web", only: "me" } })
      .where(eq(nodes.id, one!.id));
    const got: string[] = [];
    const unsubscribe = await t.database.bus.subscribe(CHANNELS.declaration, (p) => got.push(p));
    const result = await upsertRole(deps, {
      actor: "test",
      input: { name: "only", selector: { labels: { only: "me" } }, resources: [{ type: "directory", id: "only", path: "/only" }] },
    });
    expect(result.changed).toBe(1);
    await expect.poll(() => got).toEqual([one!.id]);
    await deleteRole(deps, { actor: "test", name: "only" });
    await unsubscribe();
  });

  it(`keeps ${DECLARATION_HISTORY_PER_NODE} versions per node and no body that no version names`, async () => {
    const rounds = DECLARATION_HISTORY_PER_NODE + 5;
    for (let i = 1; i <= rounds; i++) await upsertRole(deps, { actor: "test", input: motd(i) });
    const perNode = await deps.db
      .select({ nodeId: declarations.nodeId, n: sql<number>`count(*)::int`, max: sql<number>`max(version)::int` })
      .from(declarations)
      .groupBy(declarations.nodeId);
    expect(perNode).toHaveLength(5);
    for (const row of perNode) {
      expect(row.n).toBe(DECLARATION_HISTORY_PER_NODE);
      expect(row.max).toBeGreaterThan(rounds); // one node also had the "only" role come and go
    }
    const named = await deps.db.selectDistinct({ hash: declarations.hash }).from(declarations);
    const bodies = await deps.db.select({ hash: declarationBodies.hash }).from(declarationBodies);
    expect(bodies.map((b) => b.hash).sort()).toEqual(named.map((n) => n.hash).sort());
  });
});
