// Fleet compile: the time of a role.upsert that gives every node a new 2 KB file, old per-node
// compiler (recompileNode in a loop, ~6 queries a node) against the set-based one
// (recompile-fleet.ts), at 1,000 and 10,000 nodes seeded straight into a fresh Postgres database.
// Run: DATABASE_URL=postgres://… npm run bench:compile -w @mesh/test   (BENCH_COMPILE_NODES=1000,10000)
// Then (BENCH_COMPILE_FOLD=0 skips it) role.upsert against the same save with the conflict check reading
// and compiling the fleet apart from the compile (as it did before decision 0044), alternated on one
// database so that a busy machine weighs on both alike.
import postgres from "postgres";
import pino from "pino";
import { inArray, sql as dsql } from "drizzle-orm";
import { createDb, roles as rolesTable, nodes } from "@mesh/db";
import { migrate } from "@mesh/db/migrate";
import { createPostgresDatabase } from "@mesh/db/testing";
import { Role, type RoleInput } from "@mesh/protocol";
import type { Deps } from "../../packages/api/src/deps";
import { upsertRole } from "../../packages/api/src/services/roles";
import { COMPILABLE_STATES, loadRoles, lockCompiler, recompileNode } from "../../packages/api/src/services/recompile-node";
import { recordEvent } from "../../packages/api/src/services/record-event";
import { checkConflicts, refuseNewConflicts } from "../../packages/api/src/services/check-conflicts";
import { writeRoleVersion } from "../../packages/api/src/services/write-role-version";
import { recompileFleet } from "../../packages/api/src/services/recompile-fleet";
import { dropPins, supersedeRollouts } from "../../packages/api/src/rollouts/start-rollout";

const SIZES = (process.env.BENCH_COMPILE_NODES ?? "1000,10000").split(",").map(Number);
const RUNS_NEW = 3;
/** BENCH_COMPILE_OLD=0 skips the old compiler (tens of seconds at 10,000 nodes). */
const WITH_OLD = process.env.BENCH_COMPILE_OLD !== "0";
/** BENCH_COMPILE_FOLD=0 skips the comparison with the conflict check apart from the compile. */
const WITH_FOLD = process.env.BENCH_COMPILE_FOLD !== "0";
const RUNS_FOLD = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function seed(url: string, n: number) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const profile = {
    hostname: "x",
    os: "debian",
    osRelease: "Debian 12",
    osVersionId: "12",
    kernel: "6.1",
    arch: "x86_64",
    cpus: 2,
    memoryBytes: 1,
    diskBytes: 1,
    initSystem: "systemd",
    packageManager: "dpkg",
    hostVersion: "0.1.0",
  };
  const inventory = { packages: [], units: [], ports: [], mounts: [], truncated: false };
  // Mostly live nodes (a role change compiles enrolled and disconnected ones), each holding a declaration.
  await sql`
    insert into nodes (id, name, state, labels, public_key, machine_id, profile, inventory, declared_version)
    select gen_random_uuid(), 'node-' || lpad(i::text, 5, '0'),
      (array['enrolled','enrolled','enrolled','enrolled','enrolled','enrolled','enrolled','enrolled','disconnected','retired'])[1 + i % 10],
      jsonb_build_object('tier', (array['web','db','cache','batch'])[1 + i % 4], 'zone', (array['a','b','c'])[1 + i % 3]),
      'key-' || i, md5(i::text), ${sql.json(profile)} || jsonb_build_object('machineId', md5(i::text)), ${sql.json(inventory)}, 1
    from generate_series(1, ${n}) as i`;
  await sql`insert into declaration_bodies (hash, resources) values ('empty', '[]'::jsonb)`;
  await sql`insert into declarations (node_id, version, hash, roles) select id, 1, 'empty', '[]'::jsonb from nodes`;
  await sql`analyze`;
  await sql.end();
}

/** A role giving every node a 2 KB file; `round` changes its content, so every node changes. */
function bigRole(round: number): RoleInput {
  const content = `# round ${round}\n` + "x".repeat(2048 - 12) + "\n";
  return { name: "everyone", selector: {}, resources: [{ type: "file", id: "motd", path: "/etc/motd", content }] };
}

/** role.upsert as it was before issue 11: the same transaction, recompileNode for every node in turn. */
async function oldUpsertRole(deps: Deps, input: RoleInput): Promise<number> {
  const role = Role.parse(input);
  return deps.db.transaction(async (tx) => {
    await tx
      .insert(rolesTable)
      .values({ name: role.name, selector: role.selector, resources: role.resources, grants: role.grants })
      .onConflictDoUpdate({
        target: rolesTable.name,
        set: { selector: role.selector, resources: role.resources, grants: role.grants, updatedAt: dsql`now()` },
      });
    await recordEvent(tx, { actor: "bench", action: "role.upsert", data: { name: role.name, resources: role.resources.length } });
    await lockCompiler(tx);
    const roles = await loadRoles(tx);
    const ids = await tx
      .select({ id: nodes.id })
      .from(nodes)
      .where(inArray(nodes.state, [...COMPILABLE_STATES]))
      .orderBy(nodes.id);
    let changed = 0;
    for (const { id } of ids) if ((await recompileNode(tx, id, { actor: "bench", roles })).changed) changed++;
    return changed;
  });
}

/** role.upsert (all at once) as it was with the conflict check apart: it read and compiled the fleet, then recompileFleet read and compiled it again. */
async function twoReadsUpsertRole(deps: Deps, input: RoleInput): Promise<number> {
  const role = Role.parse(input);
  return deps.db.transaction(async (tx) => {
    await lockCompiler(tx);
    const check = await checkConflicts(tx, { role });
    refuseNewConflicts(check, false);
    await writeRoleVersion(tx, { actor: "bench", role, source: null, message: null, check });
    await supersedeRollouts(tx, role.name, null, new Date());
    await dropPins(tx, role.name);
    return (await recompileFleet(tx, { actor: "bench" })).changed;
  });
}

/** The two, alternated on one database: medians of RUNS_FOLD each. */
async function measureFold(n: number): Promise<{ apart: number[]; folded: number[] }> {
  const pg = await createPostgresDatabase("mesh_bench");
  const database = await createDb({ url: pg.url, maxConnections: 4 });
  try {
    await migrate(database);
    await seed(pg.url, n);
    const deps: Deps = { db: database.db, log: pino({ level: "silent" }) };
    const apart: number[] = [];
    const folded: number[] = [];
    for (let round = 1; round <= RUNS_FOLD; round++) {
      let t0 = performance.now();
      await twoReadsUpsertRole(deps, bigRole(2 * round));
      apart.push(performance.now() - t0);
      t0 = performance.now();
      await upsertRole(deps, { actor: "bench", input: bigRole(2 * round + 1) });
      folded.push(performance.now() - t0);
    }
    return { apart, folded };
  } finally {
    await database.close();
    await pg.drop();
  }
}

async function measure(n: number, mode: "old" | "new"): Promise<{ ms: number[]; changed: number; unchangedMs?: number }> {
  const pg = await createPostgresDatabase("mesh_bench");
  const database = await createDb({ url: pg.url, maxConnections: 4 });
  try {
    await migrate(database);
    await seed(pg.url, n);
    const deps: Deps = { db: database.db, log: pino({ level: "silent" }) };
    const ms: number[] = [];
    let changed = 0;
    // The old compiler at 10,000 nodes takes tens of seconds: once is enough to see it.
    const runs = mode === "old" && n > 2_000 ? 1 : RUNS_NEW;
    for (let round = 1; round <= runs; round++) {
      const t0 = performance.now();
      changed = mode === "old" ? await oldUpsertRole(deps, bigRole(round)) : (await upsertRole(deps, { actor: "bench", input: bigRole(round) })).changed;
      ms.push(performance.now() - t0);
    }
    // The same role again: nothing changes, the cost of finding that out.
    const t0 = performance.now();
    const again = mode === "old" ? await oldUpsertRole(deps, bigRole(runs)) : (await upsertRole(deps, { actor: "bench", input: bigRole(runs) })).changed;
    const unchangedMs = performance.now() - t0;
    if (again !== 0) throw new Error(`the same role again changed ${again} nodes`);
    return { ms, changed, unchangedMs };
  } finally {
    await database.close();
    await pg.drop();
  }
}

const fmt = (xs: number[]) => `${median(xs).toFixed(0)} ms` + (xs.length > 1 ? ` (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})` : "");
const rows: string[][] = [];
for (const n of SIZES) {
  const fresh = await measure(n, "new");
  // BENCH_COMPILE_OLD=0: the old compiler's cells say so rather than NaN.
  const old = WITH_OLD ? await measure(n, "old") : undefined;
  if (old && old.changed !== fresh.changed) throw new Error(`old changed ${old.changed} nodes, new ${fresh.changed}`);
  rows.push([
    n.toLocaleString("en"),
    String(fresh.changed),
    old ? fmt(old.ms) : "not run",
    fmt(fresh.ms),
    old ? `${(median(old.ms) / median(fresh.ms)).toFixed(0)}×` : "—",
    old ? `${old.unchangedMs!.toFixed(0)} ms` : "not run",
    `${fresh.unchangedMs!.toFixed(0)} ms`,
  ]);
  console.error(`done ${n}`);
}
const header = ["nodes", "changed", "old: upsert (2 KB to all)", "new: upsert (2 KB to all)", "speed-up", "old: same role again", "new: same role again"];
console.log(`\nrole.upsert of a 2 KB file to every node, Postgres 15, one transaction (median; old once at > 2,000 nodes):\n`);
console.log(`| ${header.join(" | ")} |\n| ${header.map(() => "---").join(" | ")} |`);
for (const r of rows) console.log(`| ${r.join(" | ")} |`);

if (WITH_FOLD) {
  console.log(
    `\nrole.upsert of a 2 KB file to every node: the conflict check apart (its own read and compiles) or folded into the compile's (median of ${RUNS_FOLD}, alternated):\n`,
  );
  console.log(`| nodes | check apart (two reads) | check folded (one read) |\n| --- | --- | --- |`);
  for (const n of SIZES) {
    const { apart, folded } = await measureFold(n);
    console.log(`| ${n.toLocaleString("en")} | ${fmt(apart)} | ${fmt(folded)} |`);
  }
}
