"use client";
// Every role: its selector and resources; an admin opens the editor or deletes one.
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { Dialog } from "../dialog";
import { EmptyState, ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";
import { ReconcileRoleButton } from "./reconcile-role-button";

/** The role's place in the list: the node page links each role it names here (viewers too). */
export const roleAnchor = (name: string) => `role-${name}`;
/** A revoke-when-offline limit in the unit an operator would write it in. */
function offlineLimit(minutes: number): string {
  if (minutes % 1440 === 0) return `${minutes / 1440} day${minutes === 1440 ? "" : "s"}`;
  if (minutes % 60 === 0) return `${minutes / 60} hour${minutes === 60 ? "" : "s"}`;
  return `${minutes} minutes`;
}

export function RoleList({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const roles = useQuery(trpc.role.list.queryOptions(undefined, { refetchInterval: 5000 }));
  const [deleting, setDeleting] = useState<string | null>(null);
  const remove = useMutation(
    trpc.role.delete.mutationOptions({ onSuccess: () => (setDeleting(null), queryClient.invalidateQueries({ queryKey: trpc.role.list.queryKey() })) }),
  );
  if (roles.isPending) return <LoadingState label="Loading roles…" />;
  if (roles.isError) return <ErrorState error={roles.error} title="Could not load roles" />;
  if (roles.data.length === 0)
    return (
      <EmptyState>
        No roles yet.{" "}
        {canEdit ? (
          <Link href="/roles/edit" className="underline">
            Create the first one
          </Link>
        ) : (
          "An admin creates them."
        )}
      </EmptyState>
    );
  return (
    <>
      <ul className="space-y-3">
        {roles.data.map((r) => (
          <li
            key={r.name}
            id={roleAnchor(r.name)}
            data-testid="role-row"
            className="scroll-mt-4 rounded-lg border border-slate-200 bg-white p-4 target:ring-2 target:ring-sky-500"
          >
            <div className="flex flex-wrap items-center justify-between gap-2">
              <div>
                <h2 className="font-mono text-base font-semibold">{r.name}</h2>
                <p className="text-sm text-slate-700">
                  {r.resources.length} resource{r.resources.length === 1 ? "" : "s"} · selector{" "}
                  <code className="rounded bg-slate-100 px-1 text-xs">{JSON.stringify(r.selector)}</code>
                  {r.revokeOfflineAfter ? <> · revokes nodes offline longer than {offlineLimit(r.revokeOfflineAfter)}</> : null}
                </p>
              </div>
              {canEdit && (
                <div className="flex items-start gap-2">
                  <ReconcileRoleButton name={r.name} />
                  <Link
                    href={`/roles/edit?name=${encodeURIComponent(r.name)}`}
                    className="rounded-md border border-slate-300 px-3 py-1.5 text-sm font-medium hover:bg-slate-100"
                  >
                    Edit <span className="sr-only">{r.name}</span>
                  </Link>
                  <Button kind="danger" onClick={() => setDeleting(r.name)} aria-label={`Delete role ${r.name}`}>
                    Delete
                  </Button>
                </div>
              )}
            </div>
            <details className="mt-2 text-sm">
              <summary className="cursor-pointer text-slate-700">Resources</summary>
              <pre tabIndex={0} className="mt-2 overflow-x-auto rounded bg-slate-50 p-2 text-xs focus-visible:ring-2 focus-visible:ring-sky-500">
                {JSON.stringify(r.resources, null, 2)}
              </pre>
            </details>
          </li>
        ))}
      </ul>
      <Dialog open={deleting !== null} onClose={() => setDeleting(null)} title={`Delete role ${deleting ?? ""}?`}>
        <p className="text-sm text-slate-700">Every node it matches will remove the resources it declared.</p>
        {remove.isError && (
          <p role="alert" className="text-sm text-rose-700">
            {errorMessage(remove.error)}
          </p>
        )}
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDeleting(null)}>Cancel</Button>
          <Button kind="danger" disabled={remove.isPending} onClick={() => deleting && remove.mutate({ name: deleting })}>
            Delete role
          </Button>
        </div>
      </Dialog>
    </>
  );
}
