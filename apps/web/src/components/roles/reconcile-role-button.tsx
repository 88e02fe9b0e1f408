"use client";
// Reconcile now, per role: every node whose current declaration includes the role is asked at once.
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { errorMessage } from "../error-message";
import { describeReconcile } from "../act-now/reconcile-answer";

export function ReconcileRoleButton({ name }: { name: string }) {
  const trpc = useTRPC();
  const reconcile = useMutation(trpc.role.reconcile.mutationOptions());
  return (
    <span className="inline-flex flex-col items-end gap-1">
      <Button disabled={reconcile.isPending} onClick={() => reconcile.mutate({ name })} aria-label={`Reconcile now: every node of role ${name}`}>
        Reconcile now
      </Button>
      <span role="status" className="text-xs text-slate-700">
        {reconcile.isSuccess ? describeReconcile(reconcile.data) : reconcile.isError ? errorMessage(reconcile.error) : ""}
      </span>
    </span>
  );
}
