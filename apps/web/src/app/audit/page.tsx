// Audit: the trail of every mutation, filterable.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { AuditView } from "@/components/audit/audit-view";

export const dynamic = "force-dynamic";

export default async function AuditPage({ searchParams }: { searchParams: Promise<{ node?: string }> }) {
  const { node } = await searchParams;
  const { me } = await requireSession();
  return (
    <Shell me={me}>
      <h1 className="mb-4 text-2xl font-semibold">Audit</h1>
      <AuditView initialNode={node} />
    </Shell>
  );
}
