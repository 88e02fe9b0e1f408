// A brand-new node and its first declaration, written together: the declaration is compiled
// in memory from the facts in hand (the token's labels, the reported profile) before the row
// exists, so the node is inserted once with its version and conflicts already set, with no
// re-read, no compare against a previous version (there is none) and no history to prune.
// The result is what recompileNode would store for the same node (first-declaration.test.ts).
import { randomUUID } from "node:crypto";
import { nodes, notify, notifyMany, CHANNELS, type Channel, type DbOrTx } from "@mesh/db";
import { compileDeclaration, declarationHash, type CompiledDeclaration } from "../compile/compile-declaration";
import { ensureNodeGrants } from "../grants/ensure-node-grants";
import type { Grants } from "../grants/provider";
import { appendDeclaration, appendDeclarations, storeBodies, type DeclarationRow } from "./declaration-store";
import type { VersionedRole } from "./recompile-node";
import { roleVersionsOf } from "./role-pins";
import { recordEvents, type EventInput } from "./record-event";
import { timed } from "../batching/statement-times";

export type NewNodeValues = Omit<typeof nodes.$inferInsert, "id" | "declaredVersion" | "conflicts"> & { labels: Record<string, string> };

export interface FirstDeclarationInput {
  values: NewNodeValues;
  /** Read under the compiler lock (lockCompilerShared) by the caller; a new node has no pins: the newest. */
  roles: VersionedRole[];
  actor: string;
  grants?: Grants;
  /** The event saying why the node exists (node.enrol), written with the compile's own in one statement. */
  event: Omit<EventInput, "nodeId">;
}

/** A new node compiled in memory: its row, its first declaration (none when conflicted), its events and notification. */
export interface PlannedNode {
  id: string;
  row: typeof nodes.$inferInsert & { id: string };
  compiled: CompiledDeclaration;
  conflicted: boolean;
  events: EventInput[];
}

export function planFirstDeclaration(input: FirstDeclarationInput): PlannedNode {
  const { values, roles, actor } = input;
  const id = randomUUID();
  const compiled = compileDeclaration({ labels: values.labels, profile: values.profile as Record<string, unknown> }, roles);
  // A conflict pushes nothing: the node waits at version 0 with its conflicts shown.
  const conflicted = compiled.conflicts.length > 0;
  const events: EventInput[] = [{ ...input.event, nodeId: id }];
  if (conflicted) events.push({ actor, action: "declaration.conflict", nodeId: id, result: "refused", data: { conflicts: compiled.conflicts } });
  return { id, row: { ...values, id, conflicts: compiled.conflicts, declaredVersion: conflicted ? 0 : 1 }, compiled, conflicted, events };
}

/** The declaration row, compile event and notification of a planned node once its grants (if any) are in its resources. */
function finish(
  planned: PlannedNode,
  input: FirstDeclarationInput,
): { declaration: (DeclarationRow & { resources: unknown[] }) | null; notification: [Channel, string] } {
  const { compiled, id } = planned;
  if (planned.conflicted) return { declaration: null, notification: [CHANNELS.node, id] };
  planned.events.push({
    actor: input.actor,
    action: "declaration.compile",
    nodeId: id,
    data: { version: 1, hash: compiled.hash, roles: compiled.roles, resources: compiled.resources.length },
  });
  return {
    declaration: {
      nodeId: id,
      version: 1,
      hash: compiled.hash,
      resources: compiled.resources,
      roles: compiled.roles,
      roleVersions: roleVersionsOf(compiled.roles, input.roles),
    },
    notification: [CHANNELS.declaration, id],
  };
}

export async function insertNodeWithFirstDeclaration(
  tx: DbOrTx,
  input: FirstDeclarationInput,
): Promise<{ id: string; name: string; labels: Record<string, string> }> {
  const planned = planFirstDeclaration(input);
  const { id, compiled } = planned;
  await tx.insert(nodes).values(planned.row);
  // A new node holds no grants, so there is nothing to keep or revoke unless some are declared.
  if (!planned.conflicted && compiled.grants.length > 0) {
    const grantFiles = await ensureNodeGrants(tx, input.grants, id, compiled.grants, input.actor);
    if (grantFiles.length > 0) {
      compiled.resources = [...compiled.resources, ...grantFiles].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      compiled.hash = declarationHash(compiled.resources);
    }
  }
  const { declaration, notification } = finish(planned, input);
  if (declaration) await appendDeclaration(tx, declaration);
  await recordEvents(tx, planned.events);
  await notify(tx, notification[0], notification[1]);
  return { id, name: input.values.name, labels: input.values.labels };
}

/**
 * Many new nodes with their first declarations, in five statements whatever their number (group
 * commit of enrolments, enrol-batch.ts): one INSERT of the nodes, one of the bodies (shared by hash),
 * one of the declarations, one of the events, one NOTIFY. Nodes whose declaration declares grants
 * are not taken here (they need ensureNodeGrants: insertNodeWithFirstDeclaration).
 */
export async function insertNodesWithFirstDeclarations(tx: DbOrTx, inputs: Array<{ planned: PlannedNode; input: FirstDeclarationInput }>): Promise<void> {
  if (inputs.length === 0) return;
  for (const { planned } of inputs)
    if (!planned.conflicted && planned.compiled.grants.length > 0) throw new Error("a node declaring grants takes insertNodeWithFirstDeclaration");
  // Inserted in machine-id order: two batches naming the same machines wait on each other's
  // unique-index entries in one order, never in a cycle.
  const sorted = [...inputs].sort((a, b) =>
    a.planned.row.machineId < b.planned.row.machineId ? -1 : a.planned.row.machineId > b.planned.row.machineId ? 1 : 0,
  );
  await timed("enrol: insert nodes", () => tx.insert(nodes).values(sorted.map((i) => i.planned.row)));
  const finished = inputs.map(({ planned, input }) => finish(planned, input));
  const declared = finished.flatMap((f) => (f.declaration ? [f.declaration] : []));
  await timed("enrol: store bodies", () => storeBodies(tx, declared));
  await timed("enrol: insert declarations", () => appendDeclarations(tx, declared));
  await timed("enrol: insert events", () =>
    recordEvents(
      tx,
      inputs.flatMap((i) => i.planned.events),
    ),
  );
  await timed("enrol: notify", () =>
    notifyMany(
      tx,
      finished.map((f) => f.notification),
    ),
  );
}
