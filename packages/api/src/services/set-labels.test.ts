// One node's label edit checks conflicts against the labels it replaces: the node's row is locked
// before the check reads it, so an edit committed meanwhile is checked against, never overwritten unseen.
import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { nodes } from "@mesh/db";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { getNode } from "./get-node";
import { upsertRole } from "./roles";
import { setLabels } from "./set-labels";
import { lockCompilerShared } from "./recompile-node";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

const file = (id: string, content: string) => ({ type: "file" as const, id, path: `/etc/${id}`, content });

// Two transactions at once: Postgres only (PGlite has one connection).
describe.skipIf(!process.env.DATABASE_URL)("setLabels against a concurrent edit on postgres", () => {
  let deps: Deps;
  useServiceDeps("postgres", (d) => (deps = d));

  it("checks conflicts against the labels an edit committed while it waited, and refuses a conflict that is new against them", async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: {} } });
    const id = (await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() }))
      .nodeId;
    await upsertRole(deps, { actor: "test", input: { name: "x", selector: { labels: { x: "1" } }, resources: [file("motd", "x\n")] } });
    await upsertRole(deps, { actor: "test", input: { name: "y", selector: { labels: { y: "1" } }, resources: [file("motd", "y\n")] } });
    // The node is in conflict, confirmed: an edit that keeps that conflict needs no confirmation.
    await setLabels(deps, { actor: "test", input: { id, labels: { x: "1", y: "1" }, confirmConflicts: true } });

    // Another edit resolves the conflict and holds its transaction open.
    let release!: () => void;
    let edited!: () => void;
    const editedNow = new Promise<void>((r) => (edited = r));
    const other = deps.db.transaction(async (tx) => {
      await lockCompilerShared(tx);
      await tx.update(nodes).set({ labels: {} }).where(eq(nodes.id, id));
      edited();
      await new Promise<void>((r) => (release = r));
    });
    await editedNow;
    // This edit brings the conflict back: against the labels stored before it is not new, against the ones
    // the other edit commits it is. It waits for the other edit's row lock, then must check against those.
    const outcome = setLabels(deps, { actor: "test", input: { id, labels: { x: "1", y: "1", z: "1" } } }).then(
      () => "saved",
      (e: { code?: string }) => e.code,
    );
    for (let i = 0; i < 200; i++) {
      const [{ waiting }] = (await deps.db.execute(
        sql`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      )) as unknown as [{ waiting: number }];
      if (waiting > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    release();
    await other;
    expect(await outcome).toBe("CONFLICT");
    expect((await getNode(deps, id)).labels).toEqual({});
  });
});
