import Link from "next/link";
import { dashboardCaller } from "@/server/caller";
import { Shell } from "@/components/shell";
import { StateBadge } from "@/components/state-badge";
import { RelativeTime } from "@/components/relative-time";
import { IssueTokenButton } from "@/components/issue-token-button";
import { AutoRefresh } from "@/components/auto-refresh";

export const dynamic = "force-dynamic";

export default async function FleetPage({ searchParams }: { searchParams: Promise<{ page?: string }> }) {
  const api = await dashboardCaller();
  const page = Math.max(0, Number((await searchParams).page ?? 0) || 0);
  const limit = 50;
  const { items, total } = await api.node.list({ limit, offset: page * limit });
  return (
    <Shell>
      <AutoRefresh />
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div>
          <h1 className="text-2xl font-semibold">Fleet</h1>
          <p className="text-sm text-slate-600">{total} node{total === 1 ? "" : "s"}</p>
        </div>
        <IssueTokenButton />
      </div>
      {items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white p-10 text-center text-slate-600">
          No machines yet. Issue a token and run the command it shows on a machine with mesh-host installed.
        </div>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
          <table className="min-w-full text-sm">
            <thead className="bg-slate-50 text-left text-slate-600">
              <tr>
                <th className="px-4 py-2 font-medium">Name</th>
                <th className="px-4 py-2 font-medium">State</th>
                <th className="px-4 py-2 font-medium">Declared / applied</th>
                <th className="px-4 py-2 font-medium">Owned</th>
                <th className="px-4 py-2 font-medium">Drift</th>
                <th className="px-4 py-2 font-medium">Last seen</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {items.map((n) => (
                <tr key={n.id} data-testid="fleet-row" className="hover:bg-slate-50">
                  <td className="px-4 py-2">
                    <Link href={`/nodes/${n.id}`} className="font-medium text-slate-900 underline-offset-2 hover:underline">
                      {n.name}
                    </Link>
                  </td>
                  <td className="px-4 py-2">
                    <StateBadge state={n.state} />
                  </td>
                  <td className="px-4 py-2 tabular-nums">
                    v{n.declaredVersion} / <span className={n.appliedVersion === n.declaredVersion ? "" : "text-amber-700"}>v{n.appliedVersion}</span>
                  </td>
                  <td className="px-4 py-2 tabular-nums">{n.ownedCount}</td>
                  <td className="px-4 py-2 tabular-nums">{n.driftCount > 0 ? <span className="text-amber-700">{n.driftCount}</span> : 0}</td>
                  <td className="px-4 py-2 text-slate-600">
                    <RelativeTime at={n.lastSeenAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {total > limit && (
        <nav className="mt-4 flex gap-2 text-sm" aria-label="pages">
          {page > 0 && <Link href={`/?page=${page - 1}`} className="rounded border px-3 py-1">Previous</Link>}
          {(page + 1) * limit < total && <Link href={`/?page=${page + 1}`} className="rounded border px-3 py-1">Next</Link>}
        </nav>
      )}
    </Shell>
  );
}
