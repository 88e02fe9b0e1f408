// node.get: everything the node page shows, in one call.
import { desc, eq } from "drizzle-orm";
import { events, latestReports, nodes } from "@mesh/db";
import type { Report } from "@mesh/protocol";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { currentDeclaration } from "./recompile-node";

export async function getNodeOrThrow(deps: Pick<Deps, "db">, id: string) {
  const [node] = await deps.db.select().from(nodes).where(eq(nodes.id, id));
  if (!node) throw new MeshError("NOT_FOUND", `no node with id ${id}`);
  return node;
}

export async function getNode(deps: Pick<Deps, "db">, id: string) {
  const node = await getNodeOrThrow(deps, id);
  const [declaration, [latest], recent] = await Promise.all([
    currentDeclaration(deps.db, id),
    deps.db.select().from(latestReports).where(eq(latestReports.nodeId, id)),
    deps.db.select().from(events).where(eq(events.nodeId, id)).orderBy(desc(events.id)).limit(50),
  ]);
  const report = (latest?.body ?? null) as Report | null;
  const { publicKey: _publicKey, ...rest } = node;
  return {
    ...rest,
    declaration,
    report,
    reportReceivedAt: latest?.receivedAt ?? null,
    owned: report?.owned ?? [],
    drift: report?.drift ?? [],
    errors: report?.errors ?? [],
    events: recent,
  };
}
