// Audit: the trail of every mutation, filterable.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { AuditView } from "@/components/audit/audit-view";

export const dynamic = "force-dynamic";

type Param = string | string[] | undefined;
const one = (v: Param) => (typeof v === "string" ? v.slice(0, 200) : undefined);

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, Param>> }) {
  const q = await searchParams;
  const { me } = await requireSession();
  return (
    <Shell me={me}>
      <h1 className="mb-4 text-2xl font-semibold">Audit</h1>
      <AuditView initial={{ actor: one(q.actor), action: one(q.action), node: one(q.node), from: one(q.from), to: one(q.to) }} />
    </Shell>
  );
}
