"use client";
// Roll back to an old version (admins): before anything is saved, the dialog shows what changes
// from the version the role holds now to the old one, and the plan of saving the old content
// (which nodes get which changes). Confirming saves it as a new version, through role.upsert's
// path: a rollback that would put nodes into conflict is refused like any save, with the confirm.
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC, useTRPCClient } from "../trpc";
import { Button } from "../button";
import { Dialog } from "../dialog";
import { ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";
import { ConflictRefusal, conflictsOf } from "../conflict-refusal";
import { RolePlan } from "./role-plan";
import { RoleVersionDiff } from "./role-version-diff";

export function RoleRollbackDialog({ name, version, from, onClose }: { name: string; version: number; from: number; onClose: () => void }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [message, setMessage] = useState("");
  const diff = useQuery(trpc.role.diff.queryOptions({ name, from, to: version }));
  const old = useQuery(trpc.role.version.queryOptions({ name, version }));
  const content = old.data ? { name, selector: old.data.selector, resources: old.data.resources, grants: old.data.grants } : null;
  const plan = useQuery({ queryKey: ["role-plan", content], queryFn: () => client.role.plan.mutate(content!), enabled: !!content });
  const rollback = useMutation(
    trpc.role.rollback.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries({ queryKey: trpc.role.pathKey() });
        // The editor above reloads with the content the role holds now.
        router.refresh();
        onClose();
      },
    }),
  );
  const refusal = rollback.isError ? conflictsOf(rollback.error) : null;
  const send = (confirmConflicts?: boolean) =>
    rollback.mutate({ name, version, message: message.trim() || undefined, ...(confirmConflicts ? { confirmConflicts } : {}) });

  return (
    <Dialog open onClose={onClose} title={`Roll back ${name} to v${version}`}>
      <div data-testid="rollback-dialog" className="max-h-[60vh] space-y-4 overflow-y-auto text-sm" tabIndex={0} role="region" aria-label="Changes and plan">
        <p>
          Saves version {version}&apos;s content as a new version of {name} and pushes it to the nodes it matches. Changes from v{from}:
        </p>
        {diff.isError ? (
          <ErrorState error={diff.error} title="Could not diff" />
        ) : !diff.data ? (
          <LoadingState label="Diffing…" />
        ) : (
          <RoleVersionDiff diff={diff.data} />
        )}
        <h3 className="text-sm font-semibold uppercase tracking-wide text-slate-600">Plan</h3>
        {old.isError ? (
          <ErrorState error={old.error} title="Could not load the version" />
        ) : plan.isError ? (
          <ErrorState error={plan.error} title="Could not plan the rollback" />
        ) : !plan.data ? (
          <LoadingState label="Planning…" />
        ) : (
          <RolePlan plan={plan.data} />
        )}
      </div>
      <label className="block text-sm font-medium">
        Message (optional)
        <input
          value={message}
          onChange={(e) => setMessage(e.target.value)}
          maxLength={500}
          placeholder={`roll back to v${version}`}
          className="mt-1 block w-full rounded-md border border-slate-300 px-2.5 py-1.5 text-sm"
        />
      </label>
      {refusal && <ConflictRefusal refusal={refusal} pending={rollback.isPending} onConfirm={() => send(true)} />}
      {rollback.isError && !refusal && (
        <p role="alert" className="text-sm text-rose-700">
          Not rolled back: {errorMessage(rollback.error)}
        </p>
      )}
      <div className="flex justify-end gap-2">
        <Button onClick={onClose}>Cancel</Button>
        <Button kind="primary" disabled={rollback.isPending || !plan.data} onClick={() => send()}>
          {rollback.isPending ? "Rolling back…" : `Roll back to v${version}`}
        </Button>
      </div>
    </Dialog>
  );
}
