// Node page: rendered on the server first, then followed live by NodeView.
import { notFound } from "next/navigation";
import { TRPCError } from "@trpc/server";
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { NodeView, type NodeDetail } from "@/components/node/node-view";
import { asSent } from "@/server/as-sent";

export const dynamic = "force-dynamic";

export default async function NodePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const { api, me, isAdmin } = await requireSession();
  let node;
  try {
    node = await api.node.get({ id });
  } catch (err) {
    if (err instanceof TRPCError && (err.code === "NOT_FOUND" || err.code === "BAD_REQUEST")) notFound();
    throw err;
  }
  return (
    <Shell me={me}>
      <NodeView initial={asSent<NodeDetail>(node)} canEdit={isAdmin} />
    </Shell>
  );
}
