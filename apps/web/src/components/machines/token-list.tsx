"use client";
// Issued tokens and what became of them (unused, used by which node, expired,
// revoked), a page at a time; an admin can revoke one not yet used up.
import Link from "next/link";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { RelativeTime } from "../relative-time";
import { LabelChips } from "../label-chips";
import { ColumnHeads } from "../column-heads";
import { EmptyState, ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";

const STATUS_COLOURS: Record<string, string> = {
  unused: "bg-emerald-100 text-emerald-800",
  used: "bg-slate-100 text-slate-700",
  expired: "bg-amber-100 text-amber-900",
  revoked: "bg-rose-100 text-rose-800",
};
const LIMIT = 20;

export function TokenList({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [page, setPage] = useState(0);
  const list = useQuery(trpc.token.list.queryOptions({ limit: LIMIT, offset: page * LIMIT }, { refetchInterval: 5000, placeholderData: keepPreviousData }));
  const revoke = useMutation(trpc.token.revoke.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.token.list.queryKey() }) }));

  if (list.isPending) return <LoadingState label="Loading tokens…" />;
  if (list.isError) return <ErrorState error={list.error} title="Could not load tokens" />;
  if (list.data.items.length === 0) return <EmptyState>No tokens issued yet.</EmptyState>;
  return (
    <div className="space-y-3">
      {revoke.isError && (
        <p role="alert" className="text-sm text-rose-700">
          Could not revoke: {errorMessage(revoke.error)}
        </p>
      )}
      <div className="overflow-x-auto focus-visible:ring-2 focus-visible:ring-sky-500" tabIndex={0} role="region" aria-label="Tokens (scrolls sideways)">
        <table className="min-w-full text-sm">
          <ColumnHeads names={["Token", "Status", "Labels", "Uses", "Nodes", "Expires", "Issued"]} cell="px-2 py-2" actions={canEdit} />
          <tbody className="divide-y divide-slate-100">
            {list.data.items.map((t) => (
              <tr key={t.id} data-testid="token-row">
                <td className="px-2 py-2 font-mono">{t.id}</td>
                <td className="px-2 py-2">
                  <span data-testid="token-status" className={`rounded-full px-2 py-0.5 text-xs font-medium ${STATUS_COLOURS[t.status]}`}>
                    {t.status}
                  </span>
                </td>
                <td className="px-2 py-2">
                  <LabelChips labels={t.labels} />
                </td>
                <td className="px-2 py-2 tabular-nums">
                  {t.uses} / {t.maxUses}
                </td>
                <td className="px-2 py-2">
                  {t.nodes.length === 0 ? (
                    <span className="text-slate-500">none</span>
                  ) : (
                    t.nodes.map((n) => (
                      <Link key={n.id} href={`/nodes/${n.id}`} className="mr-2 underline">
                        {n.name}
                      </Link>
                    ))
                  )}
                </td>
                <td className="px-2 py-2 text-slate-700">
                  <RelativeTime at={t.expiresAt} />
                </td>
                <td className="px-2 py-2 text-slate-700">
                  <RelativeTime at={t.createdAt} /> by {t.createdBy}
                </td>
                {canEdit && (
                  <td className="px-2 py-2 text-right">
                    {t.status === "unused" && (
                      <Button aria-label={`Revoke token ${t.id}`} disabled={revoke.isPending} onClick={() => revoke.mutate({ id: t.id })}>
                        Revoke
                      </Button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data.total > LIMIT && (
        <nav aria-label="Token pages" className="flex gap-2">
          <Button disabled={page === 0} onClick={() => setPage(page - 1)}>
            Previous
          </Button>
          <Button disabled={(page + 1) * LIMIT >= list.data.total} onClick={() => setPage(page + 1)}>
            Next
          </Button>
        </nav>
      )}
    </div>
  );
}
