// A brand-new node and its first declaration, written together: the declaration is compiled
// in memory from the facts in hand (the token's labels, the reported profile) before the row
// exists, so the node is inserted once with its version and conflicts already set, with no
// re-read, no compare against a previous version (there is none) and no history to prune.
// The result is what recompileNode would store for the same node (first-declaration.test.ts).
import { randomUUID } from "node:crypto";
import { nodes, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import { compileDeclaration, declarationHash } from "../compile/compile-declaration";
import { ensureNodeGrants } from "../grants/ensure-node-grants";
import type { Grants } from "../grants/provider";
import { appendDeclaration } from "./declaration-store";
import type { VersionedRole } from "./recompile-node";
import { roleVersionsOf } from "./role-pins";
import { recordEvents, type EventInput } from "./record-event";

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

export async function insertNodeWithFirstDeclaration(tx: DbOrTx, input: FirstDeclarationInput): Promise<{ id: string; name: string; labels: Record<string, string> }> {
  const { values, roles, actor } = input;
  const id = randomUUID();
  const compiled = compileDeclaration({ labels: values.labels, profile: values.profile as Record<string, unknown> }, roles);
  // A conflict pushes nothing: the node waits at version 0 with its conflicts shown.
  const conflicted = compiled.conflicts.length > 0;
  await tx.insert(nodes).values({ ...values, id, conflicts: compiled.conflicts, declaredVersion: conflicted ? 0 : 1 });
  const events: EventInput[] = [{ ...input.event, nodeId: id }];
  if (conflicted) {
    events.push({ actor, action: "declaration.conflict", nodeId: id, result: "refused", data: { conflicts: compiled.conflicts } });
    await recordEvents(tx, events);
    await notify(tx, CHANNELS.node, id);
    return { id, name: values.name, labels: values.labels };
  }
  // A new node holds no grants, so there is nothing to keep or revoke unless some are declared.
  if (compiled.grants.length > 0) {
    const grantFiles = await ensureNodeGrants(tx, input.grants, id, compiled.grants, actor);
    if (grantFiles.length > 0) {
      compiled.resources = [...compiled.resources, ...grantFiles].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      compiled.hash = declarationHash(compiled.resources);
    }
  }
  await appendDeclaration(tx, { nodeId: id, version: 1, hash: compiled.hash, resources: compiled.resources, roles: compiled.roles, roleVersions: roleVersionsOf(compiled.roles, roles) });
  events.push({ actor, action: "declaration.compile", nodeId: id, data: { version: 1, hash: compiled.hash, roles: compiled.roles, resources: compiled.resources.length } });
  await recordEvents(tx, events);
  await notify(tx, CHANNELS.declaration, id);
  return { id, name: values.name, labels: values.labels };
}
