// Makes the grants nodes' roles declare exist (issuing each once, keeping its
// secret after), marks the ones no longer declared for revocation, and turns each
// into the file resource that stands for the credential in the stored declaration.
// Nothing here talks to a provider: settle-grants does that after commit (decision 0011).
//
// Set-based: a fleet compile passes every node that declares or holds a grant at once, and
// pays one read, one delete, one insert, one update, one event per kind and one notification,
// whatever the number of nodes (issue 11: nothing once per node on a fleet-wide path).
import { and, isNull, sql } from "drizzle-orm";
import { grants, notify, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import { canonicalJson, type GrantDeclaration, type Resource } from "@mesh/protocol";
import { MeshError } from "../errors";
import { uuidSet } from "../sql/uuid-set";
import { recordEvents } from "../services/record-event";
import { grantEvents } from "./grant-events";
import { grantReference } from "./grant-reference";
import { principalFor, type Grants } from "./provider";

export interface NodeGrants {
  nodeId: string;
  declared: GrantDeclaration[];
}

/** New grant rows per INSERT (6 bound parameters each, under the protocol's 65,535). */
const INSERT_SLICE = 5_000;

/** The grant file resources per node (only nodes that declare grants have an entry). */
export async function ensureGrants(tx: DbOrTx, setup: Grants | undefined, wanted: NodeGrants[], actor: string): Promise<Map<string, Resource[]>> {
  const files = new Map<string, Resource[]>();
  if (wanted.length === 0) return files;
  const held = await tx
    .select()
    .from(grants)
    .where(and(sql`${grants.nodeId} in ${uuidSet(new Set(wanted.map((w) => w.nodeId)))}`, isNull(grants.revokedAt)));
  const heldBy = new Map<string, typeof held>();
  for (const h of held) heldBy.set(h.nodeId, [...(heldBy.get(h.nodeId) ?? []), h]);
  // jsonb reorders keys: compare specs canonically, or every recompile would re-issue every grant.
  const same = (spec: unknown, grant: GrantDeclaration) => canonicalJson(spec) === canonicalJson(grant);

  const issued: Array<typeof grants.$inferInsert & { principal: string; provider: string }> = [];
  const revoked: typeof held = [];
  for (const { nodeId, declared } of wanted) {
    const mine = heldBy.get(nodeId) ?? [];
    const resources: Resource[] = [];
    for (const grant of declared) {
      const provider = setup?.providers[grant.provider];
      if (!setup || !provider)
        throw new MeshError("BAD_INPUT", `grant "${grant.id}" needs the ${grant.provider} grant provider, which is not configured (MESH_GRANT_POSTGRES_URL)`);
      const row = mine.find((h) => h.grantId === grant.id && same(h.spec, grant));
      let credential: string;
      if (row) {
        credential = setup.secrets.open(row.secret!, row.principal);
      } else {
        const principal = principalFor(nodeId, grant.id);
        credential = provider.mint(principal, grant);
        issued.push({ nodeId, grantId: grant.id, provider: grant.provider, principal, spec: grant, secret: setup.secrets.seal(credential, principal) });
      }
      resources.push({
        type: "file",
        id: grant.id,
        path: grant.path,
        mode: grant.mode,
        content: grantReference(grant.id, credential),
        encoding: "utf8",
        onDrift: "correct",
      });
    }
    if (resources.length > 0) files.set(nodeId, resources);
    // Kept, or re-issued above under the same principal (its old row is replaced below).
    for (const h of mine) if (!declared.some((g) => g.id === h.grantId)) revoked.push(h);
  }

  const changed: string[] = [];
  if (issued.length > 0) {
    // A re-issued grant takes its principal's place: the old row (another spec) goes.
    await tx.execute(sql`
      delete from ${grants} using jsonb_to_recordset(${JSON.stringify(issued.map(({ provider, principal }) => ({ provider, principal })))}::jsonb)
        as v(provider text, principal text)
      where ${grants.provider} = v.provider and ${grants.principal} = v.principal`);
    // In slices: each row binds 6 parameters, and a statement may bind at most 65,535.
    for (let i = 0; i < issued.length; i += INSERT_SLICE) {
      const rows = await tx
        .insert(grants)
        .values(issued.slice(i, i + INSERT_SLICE))
        .returning({ id: grants.id });
      changed.push(...rows.map((r) => r.id));
    }
  }
  if (revoked.length > 0) {
    await tx
      .update(grants)
      .set({ revokedAt: sql`now()`, secret: null, settledAt: null })
      .where(sql`${grants.id} in ${uuidSet(revoked.map((h) => h.id))}`);
    changed.push(...revoked.map((h) => h.id));
  }
  if (changed.length === 0) return files;

  await recordEvents(tx, [...grantEvents(actor, "grant.issue", issued, {}), ...grantEvents(actor, "grant.revoke", revoked, { reason: "no longer declared" })]);
  // The settler sets each provider after commit; "*" asks it to settle everything pending.
  await notify(tx, CHANNELS.grant, changed.length === 1 ? changed[0]! : MANY_NODES);
  return files;
}

/** One node's grants: a batch of one. */
export async function ensureNodeGrants(
  tx: DbOrTx,
  setup: Grants | undefined,
  nodeId: string,
  declared: GrantDeclaration[],
  actor: string,
): Promise<Resource[]> {
  return (await ensureGrants(tx, setup, [{ nodeId, declared }], actor)).get(nodeId) ?? [];
}
